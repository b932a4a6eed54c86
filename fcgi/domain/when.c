/* when: canonical UTC moments of expiry and review (when.h). */
#include "domain/when.h"
#include "base/buf.h"
#include "domain/frontmatter.h"

#include <string.h>

/* The n digits at s as a number, or -1. */
static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* v as n digits at out. */
static void put(char *out, int v, int n)
{
    for (int i = n - 1; i >= 0; i--, v /= 10)
        out[i] = (char)('0' + v % 10);
}

static int days_in(int year, int month)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

int when_parse(const char *text, size_t len, char out[static WHEN_TEXT])
{
    int y, mo, d, h = 0, mi = 0, s = 0;
    if (!text || (len != 10 && len != 20))
        return -1;
    if (text[4] != '-' || text[7] != '-')
        return -1;
    y = digits(text, 4);
    mo = digits(text + 5, 2);
    d = digits(text + 8, 2);
    if (len == 20) {
        if (text[10] != 'T' || text[13] != ':' || text[16] != ':' || text[19] != 'Z')
            return -1;
        h = digits(text + 11, 2);
        mi = digits(text + 14, 2);
        s = digits(text + 17, 2);
    }
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days_in(y, mo) || h < 0 || h > 23 || mi < 0 ||
        mi > 59 || s < 0 || s > 59)
        return -1;
    put(out, y, 4);
    out[4] = '-';
    put(out + 5, mo, 2);
    out[7] = '-';
    put(out + 8, d, 2);
    out[10] = 'T';
    put(out + 11, h, 2);
    out[13] = ':';
    put(out + 14, mi, 2);
    out[16] = ':';
    put(out + 17, s, 2);
    out[19] = 'Z';
    out[20] = '\0';
    return 0;
}

/* 1 when meta's key says moment (NULL: absent or null). */
static int says_moment(struct json_object *meta, const char *key, const char *moment)
{
    struct json_object *v = NULL;
    char canon[WHEN_TEXT];
    if (meta)
        json_object_object_get_ex(meta, key, &v);
    if (!v)
        return moment == NULL;
    if (!moment || !json_object_is_type(v, json_type_string) ||
        when_parse(json_object_get_string(v), (size_t)json_object_get_string_len(v), canon))
        return 0;
    return strcmp(canon, moment) == 0;
}

static int says_pinned(struct json_object *meta, int pinned)
{
    struct json_object *v = NULL;
    if (meta)
        json_object_object_get_ex(meta, "pinned", &v);
    if (!v)
        return !pinned;
    return json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v) == !pinned;
}

/* Set meta's key to moment, or remove it (NULL). */
static void set_moment(struct json_object *meta, const char *key, const char *moment)
{
    if (moment)
        json_object_object_add(meta, key, json_object_new_string(moment));
    else
        json_object_object_del(meta, key);
}

void when_document(const char *document, const char *expires_at, const char *review_after,
                   int pinned, struct buf *out)
{
    size_t len = strlen(document), body_off = 0;
    struct json_object *meta = frontmatter_parse(document, len, &body_off);
    if (says_moment(meta, "expires_at", expires_at) &&
        says_moment(meta, "review_after", review_after) && says_pinned(meta, pinned)) {
        buf_add(out, document, len);
        json_object_put(meta);
        return;
    }
    if (!meta) {
        meta = json_object_new_object();
        body_off = 0;
    }
    set_moment(meta, "expires_at", expires_at);
    set_moment(meta, "review_after", review_after);
    if (pinned)
        json_object_object_add(meta, "pinned", json_object_new_boolean(1));
    else
        json_object_object_del(meta, "pinned");
    if (frontmatter_render(meta, out) == 0)
        buf_add(out, document + body_off, len - body_off);
    json_object_put(meta);
}
