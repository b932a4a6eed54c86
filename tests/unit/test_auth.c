/* test_auth: token creation and checking on a ":memory:" store (identity,
 * forged, malformed, revoked), role names and space names. */
#include "service/auth.h"
#include "harness.h"
#include "store/store.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

static void identity_release(struct identity *who)
{
    free(who->space);
    free(who->token_id);
    free(who->actor);
    memset(who, 0, sizeof *who);
    who->role = ROLE_NONE;
}

/* "Bearer " + token into out. */
static void bearer(struct buf *out, const char *scheme, const char *token)
{
    buf_reset(out);
    buf_addf(out, "%s%s", scheme, token);
}

/* auth_check must refuse header with -1 and leave who empty. */
static void refused(struct store *st, const char *header, int line)
{
    struct identity who = {0};
    who.role = ROLE_NONE;
    if (!harness_check_int(auth_check(st, header, &who), -1, "auth_check(header)", "-1", __FILE__,
                           line))
        fprintf(stderr, "    header: %s\n", header ? header : "(null)");
    harness_check(who.space == NULL && who.actor == NULL && who.token_id == NULL,
                  "identity left empty", __FILE__, line);
    harness_check_int(who.role, ROLE_NONE, "who.role", "ROLE_NONE", __FILE__, line);
    identity_release(&who);
}
#define REFUSED(st, h) refused((st), (h), __LINE__)

static void test_roles_and_spaces(void)
{
    CHECK_INT(role_from_name("admin"), ROLE_ADMIN);
    CHECK_INT(role_from_name("editor"), ROLE_EDITOR);
    CHECK_INT(role_from_name("agent"), ROLE_AGENT);
    CHECK_INT(role_from_name("reader"), ROLE_READER);
    CHECK_INT(role_from_name("Admin"), ROLE_NONE);
    CHECK_INT(role_from_name("root"), ROLE_NONE);
    CHECK_INT(role_from_name(""), ROLE_NONE);
    CHECK_INT(role_from_name(NULL), ROLE_NONE);
    CHECK_STR(role_name(ROLE_ADMIN), "admin");
    CHECK_STR(role_name(ROLE_EDITOR), "editor");
    CHECK_STR(role_name(ROLE_AGENT), "agent");
    CHECK_STR(role_name(ROLE_READER), "reader");
    CHECK_STR(role_name(ROLE_NONE), "none");
    CHECK_STR(role_name((enum role)42), "none");
    /* roles are ordered by power */
    CHECK(ROLE_READER < ROLE_AGENT && ROLE_AGENT < ROLE_EDITOR && ROLE_EDITOR < ROLE_ADMIN);
    for (int r = ROLE_READER; r <= ROLE_ADMIN; r++)
        CHECK_INT(role_from_name(role_name((enum role)r)), r);

    CHECK(space_name_valid("default"));
    CHECK(space_name_valid("team-a_1"));
    CHECK(space_name_valid("x"));
    CHECK(space_name_valid("0123456789012345678901234567890123456789012345678901234567890123"));
    CHECK(!space_name_valid(
        "01234567890123456789012345678901234567890123456789012345678901234")); /* 65 */
    CHECK(!space_name_valid(""));
    CHECK(!space_name_valid("Team"));
    CHECK(!space_name_valid("a b"));
    CHECK(!space_name_valid("a/b"));
    CHECK(!space_name_valid("../x"));
    CHECK(!space_name_valid("a.b"));
    CHECK(!space_name_valid("\xe4\xb8\xad"));
}

static void test_tokens(struct store *st)
{
    struct buf tok, hdr, other;
    struct identity who = {0};
    char id[17], expect_actor[64];

    buf_init(&tok, 512);
    buf_init(&hdr, 1024);
    buf_init(&other, 512);

    CHECK_INT(auth_token_create(st, "team-a", ROLE_EDITOR, "ci bot", "operator", &tok), STORE_OK);
    /* "kh_" + 16 hex + "_" + secret */
    CHECK(strncmp(tok.data, "kh_", 3) == 0);
    CHECK(tok.len > 20 && tok.data[19] == '_');
    CHECK(strspn(tok.data + 3, "0123456789abcdef") == 16);
    CHECK(tok.len >= 20 + 40); /* a 32-byte secret in base64 */
    memcpy(id, tok.data + 3, 16);
    id[16] = '\0';
    snprintf(expect_actor, sizeof expect_actor, "token:%s:ci bot", id);
    CHECK_INT(store_token_count(st), 1);

    /* the stored record */
    {
        struct token_record rec;
        CHECK_INT(store_token_get(st, id, &rec), STORE_OK);
        CHECK_STR(rec.space, "team-a");
        CHECK_STR(rec.role, "editor");
        CHECK_STR(rec.label, "ci bot");
        {
            static const unsigned char zero[32];
            CHECK(memcmp(rec.hash, zero, 32) != 0); /* a hash was stored */
        }
        store_token_record_release(&rec);
    }

    /* valid */
    who.role = ROLE_NONE;
    bearer(&hdr, "Bearer ", tok.data);
    CHECK_INT(auth_check(st, hdr.data, &who), 0);
    CHECK_STR(who.space, "team-a");
    CHECK_INT(who.role, ROLE_EDITOR);
    CHECK_STR(who.token_id, id);
    CHECK_STR(who.actor, expect_actor);
    identity_release(&who);
    /* use was recorded */
    {
        struct token_record rec;
        CHECK_INT(store_token_get(st, id, &rec), STORE_OK);
        CHECK(rec.last_used_at != NULL);
        store_token_record_release(&rec);
    }
    /* the scheme is case-insensitive; extra spaces before the token are fine */
    bearer(&hdr, "bearer ", tok.data);
    CHECK_INT(auth_check(st, hdr.data, &who), 0);
    CHECK_STR(who.space, "team-a");
    identity_release(&who);
    bearer(&hdr, "BEARER   ", tok.data);
    CHECK_INT(auth_check(st, hdr.data, &who), 0);
    identity_release(&who);

    /* without a label the actor is "token:<id>" */
    CHECK_INT(auth_token_create(st, "team-b", ROLE_READER, "", "operator", &other), STORE_OK);
    bearer(&hdr, "Bearer ", other.data);
    CHECK_INT(auth_check(st, hdr.data, &who), 0);
    CHECK_STR(who.space, "team-b");
    CHECK_INT(who.role, ROLE_READER);
    CHECK(who.actor && strncmp(who.actor, "token:", 6) == 0 && strlen(who.actor) == 6 + 16);
    identity_release(&who);
    CHECK_INT(store_token_count(st), 2);

    /* missing or malformed headers */
    REFUSED(st, NULL);
    REFUSED(st, "");
    REFUSED(st, tok.data); /* no "Bearer " */
    bearer(&hdr, "Bearer", tok.data);
    REFUSED(st, hdr.data);
    bearer(&hdr, "Basic ", tok.data);
    REFUSED(st, hdr.data);
    bearer(&hdr, "Token ", tok.data);
    REFUSED(st, hdr.data);
    REFUSED(st, "Bearer ");
    REFUSED(st, "Bearer kh_");
    REFUSED(st, "Bearer kh_0123456789abcdef");
    REFUSED(st, "Bearer xx_0123456789abcdef_secret");
    REFUSED(st, "Bearer kh_0123456789abcde_secret");   /* 15 hex */
    REFUSED(st, "Bearer kh_0123456789abcdef0_secret"); /* 17 hex */
    REFUSED(st, "Bearer kh_0123456789ABCDEF_secret");  /* uppercase hex */
    REFUSED(st, "Bearer kh_0123456789abcdeg_secret");

    /* wrong secret for a real id: forged */
    bearer(&hdr, "Bearer ", tok.data);
    hdr.data[hdr.len - 1] = hdr.data[hdr.len - 1] == 'A' ? 'B' : 'A';
    REFUSED(st, hdr.data);
    bearer(&hdr, "Bearer ", tok.data);
    buf_addch(&hdr, 'x'); /* one character too many */
    REFUSED(st, hdr.data);
    bearer(&hdr, "Bearer ", tok.data);
    hdr.len -= 1; /* one too few */
    hdr.data[hdr.len] = '\0';
    REFUSED(st, hdr.data);
    buf_reset(&hdr);
    buf_addf(&hdr, "Bearer kh_%s_", id); /* empty secret */
    REFUSED(st, hdr.data);
    /* the secret of one token with the id of another */
    buf_reset(&hdr);
    buf_addf(&hdr, "Bearer kh_%.16s_%s", other.data + 3, tok.data + 20);
    REFUSED(st, hdr.data);
    /* an id that does not exist */
    buf_reset(&hdr);
    buf_addf(&hdr, "Bearer kh_%s_%s",
             strcmp(id, "0000000000000000") ? "0000000000000000" : "1111111111111111",
             tok.data + 20);
    REFUSED(st, hdr.data);
    /* an over-long secret */
    buf_reset(&hdr);
    buf_addf(&hdr, "Bearer kh_%s_%0200d", id, 0);
    REFUSED(st, hdr.data);

    /* revoked */
    CHECK_INT(store_token_revoke(st, id, NULL, "operator"), STORE_OK);
    bearer(&hdr, "Bearer ", tok.data);
    REFUSED(st, hdr.data);
    /* the other token still works */
    bearer(&hdr, "Bearer ", other.data);
    CHECK_INT(auth_check(st, hdr.data, &who), 0);
    identity_release(&who);

    /* each token is different */
    {
        struct buf t2;
        buf_init(&t2, 512);
        CHECK_INT(auth_token_create(st, "team-a", ROLE_ADMIN, "x", "operator", &t2), STORE_OK);
        CHECK(strcmp(t2.data, tok.data) != 0);
        CHECK(strncmp(t2.data, tok.data, 19) != 0); /* different ids */
        bearer(&hdr, "Bearer ", t2.data);
        CHECK_INT(auth_check(st, hdr.data, &who), 0);
        CHECK_INT(who.role, ROLE_ADMIN);
        identity_release(&who);
        buf_release(&t2);
    }

    buf_release(&tok);
    buf_release(&hdr);
    buf_release(&other);
}

int main(void)
{
    struct store *st = NULL;
    if (sodium_init() < 0) {
        CHECK(0);
        return test_summary();
    }
    store_global_init();
    test_roles_and_spaces();
    if (!CHECK_INT(store_open(":memory:", &st), STORE_OK))
        return test_summary();
    test_tokens(st);
    store_close(st);
    return test_summary();
}
