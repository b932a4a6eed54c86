/* auth: API tokens, hashed with libsodium and compared in constant time. */
#include "service/auth.h"
#include "store/store.h"
#include "base/util.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_SECRET_BYTES 32

static const char *const role_names[] = {"reader", "agent", "editor", "admin"};

enum role role_from_name(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (name && strcmp(name, role_names[i]) == 0)
            return (enum role)i;
    return ROLE_NONE;
}

const char *role_name(enum role role)
{
    return role >= ROLE_READER && role <= ROLE_ADMIN ? role_names[role] : "none";
}

int auth_may_change(enum role role, const char *category)
{
    return !(category && strcmp(category, "rules") == 0 && role < ROLE_ADMIN);
}

int space_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

static void secret_hash(const char *secret, size_t n, unsigned char out[32])
{
    crypto_generichash(out, 32, (const unsigned char *)secret, n, NULL, 0);
}

int auth_token_create(struct store *st, const char *space, enum role role, const char *label,
                      const char *actor, struct buf *out)
{
    unsigned char id_raw[TOKEN_ID_HEX / 2], secret_raw[TOKEN_SECRET_BYTES], hash[32];
    char id[TOKEN_ID_HEX + 1];
    char secret[sodium_base64_ENCODED_LEN(TOKEN_SECRET_BYTES,
                                          sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
    int rc;

    randombytes_buf(id_raw, sizeof id_raw);
    randombytes_buf(secret_raw, sizeof secret_raw);
    sodium_bin2hex(id, sizeof id, id_raw, sizeof id_raw);
    sodium_bin2base64(secret, sizeof secret, secret_raw, sizeof secret_raw,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    secret_hash(secret, strlen(secret), hash);
    rc = store_token_insert(st, id, hash, space, role_name(role), label, actor);
    if (rc == STORE_OK) {
        buf_reset(out);
        buf_addf(out, "kh_%s_%s", id, secret);
    }
    sodium_memzero(secret_raw, sizeof secret_raw);
    sodium_memzero(secret, sizeof secret);
    return rc;
}

/* ---- verified tokens kept in memory (docs/performance.md "Round trips") ----
 *
 * The process's verified tokens, a slot each by the hash of the secret:
 * what the token lookup returned, for at most bound_ms after the lookup
 * began (knowhub serve: KNOWHUB_TOKEN_CACHE_MS, 1 s; 0 and the CLI keep
 * none). A revocation through this process drops the slot at once
 * (auth_cache_forget); one on another node or process is seen once the slot
 * is older than the bound. Only valid tokens are kept: a miss, an unknown,
 * forged or revoked token reads the store. Shared by the worker threads:
 * one mutex, held for a copy only. */
#define TOKEN_CACHE_SLOTS 1024

struct token_slot {
    unsigned char hash[32]; /* of the secret */
    char *id, *space, *role, *label, *last_used_at;
    long read_ms; /* monotonic_ms() before the lookup; 0: empty */
};

static struct {
    pthread_mutex_t lock;
    long bound_ms;
    struct token_slot slot[TOKEN_CACHE_SLOTS];
} token_cache = {PTHREAD_MUTEX_INITIALIZER, 0, {{{0}, NULL, NULL, NULL, NULL, NULL, 0}}};

void auth_cache_configure(long bound_ms)
{
    token_cache.bound_ms = bound_ms > 0 ? bound_ms : 0;
}

long auth_cache_bound_ms(void)
{
    return token_cache.bound_ms;
}

static struct token_slot *slot_of(const unsigned char hash[32])
{
    size_t h = (size_t)hash[0] | (size_t)hash[1] << 8;
    return &token_cache.slot[h % TOKEN_CACHE_SLOTS];
}

static void slot_clear(struct token_slot *s)
{
    free(s->id);
    free(s->space);
    free(s->role);
    free(s->label);
    free(s->last_used_at);
    memset(s, 0, sizeof *s);
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* The token of id whose secret hashes to hash, as read at most the bound
 * ago, into rec (caller releases); 0 on a hit, -1 on a miss. */
static int cache_get(const unsigned char hash[32], const char *id, struct token_record *rec)
{
    struct token_slot *s = slot_of(hash);
    int hit;
    memset(rec, 0, sizeof *rec);
    if (token_cache.bound_ms == 0)
        return -1;
    pthread_mutex_lock(&token_cache.lock);
    hit = s->read_ms && monotonic_ms() - s->read_ms < token_cache.bound_ms &&
          sodium_memcmp(s->hash, hash, 32) == 0 && strcmp(s->id, id) == 0;
    if (hit) {
        rec->id = xstrdup(s->id);
        rec->space = xstrdup(s->space);
        rec->role = xstrdup(s->role);
        rec->label = dup_or_null(s->label);
        rec->last_used_at = dup_or_null(s->last_used_at);
        memcpy(rec->hash, hash, 32);
    }
    pthread_mutex_unlock(&token_cache.lock);
    return hit ? 0 : -1;
}

/* Keep who's token (role, label and last use as given) as read at read_ms. */
static void cache_put(const unsigned char hash[32], const struct identity *who, const char *role,
                      const char *label, const char *last_used_at, long read_ms)
{
    struct token_slot *s = slot_of(hash);
    if (token_cache.bound_ms == 0)
        return;
    pthread_mutex_lock(&token_cache.lock);
    /* an older read never replaces a newer one of the same token */
    if (!(s->read_ms && s->read_ms > read_ms && strcmp(s->id, who->token_id) == 0)) {
        slot_clear(s);
        memcpy(s->hash, hash, 32);
        s->id = xstrdup(who->token_id);
        s->space = xstrdup(who->space);
        s->role = xstrdup(role);
        s->label = dup_or_null(label);
        s->last_used_at = dup_or_null(last_used_at);
        s->read_ms = read_ms;
    }
    pthread_mutex_unlock(&token_cache.lock);
}

/* The slot of hash records its token's use at now (its read time kept). */
static void cache_used(const unsigned char hash[32], const char *now)
{
    struct token_slot *s = slot_of(hash);
    pthread_mutex_lock(&token_cache.lock);
    if (s->read_ms && sodium_memcmp(s->hash, hash, 32) == 0) {
        free(s->last_used_at);
        s->last_used_at = xstrdup(now);
    }
    pthread_mutex_unlock(&token_cache.lock);
}

void auth_cache_forget(const char *token_id)
{
    pthread_mutex_lock(&token_cache.lock);
    for (size_t i = 0; i < TOKEN_CACHE_SLOTS; i++)
        if (token_cache.slot[i].id && strcmp(token_cache.slot[i].id, token_id) == 0)
            slot_clear(&token_cache.slot[i]);
    pthread_mutex_unlock(&token_cache.lock);
}

/* Fill who from a valid, unrevoked token record (taking its strings); -1
 * otherwise. *touched: its last use was recorded now. */
static int identity_from(struct store *st, struct token_record *rec, struct identity *who,
                         int *touched)
{
    struct buf actor;
    char minute_ago[20];
    if (rec->revoked_at || role_from_name(rec->role) == ROLE_NONE)
        return -1;
    buf_init(&actor, 512);
    buf_addf(&actor, "token:%s", rec->id);
    if (rec->label && *rec->label)
        buf_addf(&actor, ":%s", rec->label);
    who->space = rec->space;
    who->token_id = rec->id;
    who->actor = buf_detach(&actor, NULL);
    who->role = role_from_name(rec->role);
    rec->space = rec->id = NULL;
    time_utc_text_offset(minute_ago, -60);
    /* Record use at most once a minute, so reads do not take the write lock. */
    *touched = !rec->last_used_at || strcmp(rec->last_used_at, minute_ago) < 0;
    if (*touched)
        store_ignore(store_token_touch(st, who->token_id)); /* best effort */
    return 0;
}

int auth_token_id_valid(const char *id)
{
    return strlen(id) == TOKEN_ID_HEX && strspn(id, "0123456789abcdef") == TOKEN_ID_HEX;
}

const char *auth_token_split(const char *text, char id[TOKEN_ID_HEX + 1])
{
    const char *sep;
    if (strncmp(text, "kh_", 3) != 0)
        return NULL;
    sep = strchr(text + 3, '_');
    if (!sep || sep - (text + 3) != TOKEN_ID_HEX)
        return NULL;
    memcpy(id, text + 3, TOKEN_ID_HEX);
    id[TOKEN_ID_HEX] = '\0';
    return auth_token_id_valid(id) ? sep + 1 : NULL;
}

enum auth_result auth_check(struct store *st, const char *authorization, struct identity *who)
{
    const char *tok, *secret;
    char id[TOKEN_ID_HEX + 1];
    unsigned char hash[32];
    struct token_record rec;
    char now[20];
    int rc, ok, touched = 0;
    long read_ms;

    /* a generation an earlier request's lookup read is not this request's */
    store_generation_forget(st);
    if (!authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
        return AUTH_DENIED;
    tok = authorization + 7;
    while (*tok == ' ')
        tok++;
    if (!(secret = auth_token_split(tok, id)) || strlen(secret) > 128)
        return AUTH_DENIED;
    secret_hash(secret, strlen(secret), hash);
    if (cache_get(hash, id, &rec) == 0) {
        ok = identity_from(st, &rec, who, &touched) == 0;
        if (ok && touched) {
            time_utc_text(now);
            cache_used(hash, now);
        }
        store_token_record_release(&rec);
        return ok ? AUTH_OK : AUTH_DENIED;
    }
    read_ms = monotonic_ms();
    rc = store_token_get(st, id, &rec);
    if (rc == STORE_NOT_FOUND)
        return AUTH_DENIED;
    if (rc != STORE_OK)
        return AUTH_UNAVAILABLE;
    ok = sodium_memcmp(hash, rec.hash, 32) == 0 && identity_from(st, &rec, who, &touched) == 0;
    if (ok) {
        time_utc_text(now);
        cache_put(hash, who, rec.role, rec.label, touched ? now : rec.last_used_at, read_ms);
    }
    store_token_record_release(&rec);
    return ok ? AUTH_OK : AUTH_DENIED;
}

/* ---- browser logins ---- */

const char *auth_cookie_name(int https)
{
    return https ? LOGIN_COOKIE_TLS : LOGIN_COOKIE;
}

/* The value of cookie name in a Cookie header into out; -1 when absent. */
static int cookie_value(const char *header, const char *name, struct buf *out)
{
    size_t name_len = strlen(name);
    for (const char *p = header; p && *p;) {
        p += strspn(p, " \t;");
        size_t n = strcspn(p, ";");
        if (n > name_len && strncmp(p, name, name_len) == 0 && p[name_len] == '=') {
            buf_reset(out);
            return buf_add(out, p + name_len + 1, n - name_len - 1) || out->len == 0 ? -1 : 0;
        }
        p += n;
    }
    return -1;
}

static void random_text(size_t bytes, struct buf *out)
{
    unsigned char raw[32];
    char text[sodium_base64_ENCODED_LEN(32, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
    randombytes_buf(raw, bytes);
    sodium_bin2base64(text, sizeof text, raw, bytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    buf_reset(out);
    buf_adds(out, text);
    sodium_memzero(raw, sizeof raw);
}

int auth_login_start(struct store *st, const struct identity *who, struct buf *cookie,
                     struct buf *csrf)
{
    unsigned char hash[32];
    random_text(32, cookie);
    random_text(24, csrf);
    secret_hash(cookie->data, cookie->len, hash);
    return store_login_insert(st, hash, who->token_id, csrf->data, LOGIN_LIFETIME_SECONDS);
}

enum auth_result auth_check_cookie(struct store *st, const char *cookie_header, const char *name,
                                   struct identity *who, char **csrf)
{
    struct buf value;
    struct token_record rec;
    unsigned char hash[32];
    int rc, touched;
    *csrf = NULL;
    buf_init(&value, 256);
    if (cookie_value(cookie_header, name, &value)) {
        buf_release(&value);
        return AUTH_DENIED;
    }
    secret_hash(value.data, value.len, hash);
    buf_release(&value);
    rc = store_login_get(st, hash, &rec, csrf);
    if (rc == STORE_OK && identity_from(st, &rec, who, &touched) == 0) {
        store_token_record_release(&rec);
        return AUTH_OK;
    }
    store_token_record_release(&rec);
    free(*csrf);
    *csrf = NULL;
    return rc == STORE_OK || rc == STORE_NOT_FOUND ? AUTH_DENIED : AUTH_UNAVAILABLE;
}

void auth_login_end(struct store *st, const char *cookie_header, const char *name)
{
    struct buf value;
    unsigned char hash[32];
    buf_init(&value, 256);
    if (cookie_value(cookie_header, name, &value) == 0) {
        secret_hash(value.data, value.len, hash);
        store_ignore(store_login_delete(st, hash)); /* the cookie goes anyway; it expires */
    }
    buf_release(&value);
}

int auth_csrf_ok(const char *expected, const char *given)
{
    size_t n = expected ? strlen(expected) : 0;
    return n > 0 && given && strlen(given) == n && sodium_memcmp(expected, given, n) == 0;
}

int auth_bearer_is(const char *authorization, const char *secret)
{
    return authorization && strncmp(authorization, "Bearer ", 7) == 0 &&
           auth_csrf_ok(secret, authorization + 7);
}
