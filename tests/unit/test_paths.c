/* test_paths: file-view path checks in the reference's order and with its
 * messages (REFERENCE.md section 2), the characters KnowHub refuses on top,
 * normalisation and path_stem. */
#include "harness.h"
#include "domain/paths.h"

static struct buf out, err;

/* path_check with its message into err (empty on success). */
static int check(const char *category, const char *path, struct buf *norm, struct buf *message)
{
    struct error e;
    int rc;
    error_init(&e);
    rc = path_check(category, path, norm, &e);
    buf_reset(message);
    if (rc)
        buf_add(message, e.message.data, e.message.len);
    error_release(&e);
    return rc;
}

/* Expect path_check to refuse (category, path) with exactly message. */
static void refused(const char *category, const char *path, const char *message, int line)
{
    int rc = check(category, path, &out, &err);
    if (!harness_check_int(rc, -1, "path_check(...)", "-1", __FILE__, line))
        fprintf(stderr, "    (%s, \"%s\")\n", category ? category : "NULL", path);
    harness_check_str(err.data, message, "err", "message", __FILE__, line);
}

/* Expect path_check to accept (category, path), normalised to norm. */
static void accepted(const char *category, const char *path, const char *norm, int line)
{
    int rc = check(category, path, &out, &err);
    if (!harness_check_int(rc, 0, "path_check(...)", "0", __FILE__, line))
        fprintf(stderr, "    (%s, \"%s\"): %s\n", category, path, err.data);
    harness_check_str(out.data, norm, "out", "norm", __FILE__, line);
}

#define REFUSED(c, p, m) refused((c), (p), (m), __LINE__)
#define ACCEPTED(c, p, n) accepted((c), (p), (n), __LINE__)

static void test_categories(void)
{
    CHECK(category_valid("rules"));
    CHECK(category_valid("experiences"));
    CHECK(!category_valid("x"));
    CHECK(!category_valid("Rules"));
    CHECK(!category_valid(""));
    CHECK(!category_valid("rules "));
    CHECK(!category_valid(NULL));
}

static void test_reference_messages(void)
{
    /* 1. category first, even before an empty path */
    REFUSED("x", "a.md", "Invalid category: 'x'");
    REFUSED("x", "", "Invalid category: 'x'");
    REFUSED("", "a.md", "Invalid category: ''");
    /* 2. empty path */
    REFUSED("rules", "", "Empty path");
    REFUSED("experiences", "", "Empty path");
    /* 3. the .md suffix, case-sensitive */
    REFUSED("rules", "a.MD", "Knowledge files must be .md format");
    REFUSED("rules", ".MD", "Knowledge files must be .md format");
    REFUSED("experiences", "notes.txt", "Knowledge files must be .md format");
    REFUSED("experiences", ".txt", "Knowledge files must be .md format");
    REFUSED("rules", "x", "Knowledge files must be .md format");
    REFUSED("rules", "a.md.txt", "Knowledge files must be .md format");
    REFUSED("experiences", "a.md/b", "Knowledge files must be .md format");
    REFUSED("rules", ".", "Knowledge files must be .md format");
    REFUSED("rules", "/", "Knowledge files must be .md format");
    /* the suffix check comes before the depth check */
    REFUSED("rules", "a/b/c.txt", "Knowledge files must be .md format");
    /* 4. depth: rules are flat */
    REFUSED("rules", "a/b.md", "rules does not allow sub-directories");
    REFUSED("rules", "../../../etc/passwd.md", "rules does not allow sub-directories");
    REFUSED("rules", "../x.md", "rules does not allow sub-directories");
    REFUSED("rules", "/x.md", "rules does not allow sub-directories");
    /* experiences: at most one level */
    REFUSED("experiences", "a/b/c.md", "experiences allows at most one level of sub-directories");
    REFUSED("experiences", "/etc/passwd.md",
            "experiences allows at most one level of sub-directories");
    REFUSED("experiences", "../../x.md", "experiences allows at most one level of sub-directories");
    /* then the confinement checks */
    REFUSED("experiences", "/x.md", "Absolute path not allowed: '/x.md'");
    REFUSED("experiences", "../x.md", "Path traversal segment '..' in: '../x.md'");
    REFUSED("experiences", "a/../b.md", "experiences allows at most one level of sub-directories");
    REFUSED("experiences", "../a.md", "Path traversal segment '..' in: '../a.md'");
    /* ".md" alone has no stem, so no suffix (pathlib's rule) */
    REFUSED("rules", ".md", "Knowledge files must be .md format");
    REFUSED("experiences", "a/.md", "Knowledge files must be .md format");
}

static void test_refused_characters(void)
{
    const char *msg = "Path contains a backslash or a control character";
    REFUSED("rules", "a\\b.md", msg);
    REFUSED("rules", "..\\..\\x.md", msg);
    REFUSED("experiences", "a\\..\\b.md", msg);
    REFUSED("rules", "a\tb.md", msg);
    REFUSED("rules", "a\nb.md", msg);
    REFUSED("rules", "a\rb.md", msg);
    REFUSED("rules", "\x01.md", msg);
    REFUSED("rules", "a\x1f.md", msg);
    REFUSED("rules", "a\x7f.md", msg);
    REFUSED("experiences", "dir\x1b/x.md", msg);
    /* invalid UTF-8 */
    REFUSED("rules", "a\xff.md", "Path must be valid UTF-8 of at most 255 characters");
    REFUSED("rules", "\xed\xa0\x80.md", "Path must be valid UTF-8 of at most 255 characters");
    REFUSED("rules", "\xc0\xaf.md", "Path must be valid UTF-8 of at most 255 characters");
}

static void test_length_limit(void)
{
    struct buf p;
    buf_init(&p, 4096);
    /* 252 + ".md" = 255 characters: accepted */
    for (int i = 0; i < 252; i++)
        buf_addch(&p, 'a');
    buf_adds(&p, ".md");
    CHECK_INT(check("rules", p.data, &out, &err), 0);
    buf_reset(&p);
    for (int i = 0; i < 253; i++)
        buf_addch(&p, 'a');
    buf_adds(&p, ".md");
    REFUSED("rules", p.data, "Path must be valid UTF-8 of at most 255 characters");
    /* A file or folder name is at most 255 bytes (what a file system holds):
     * 84 CJK characters + ".md" = 255 bytes pass, one more byte does not. */
    buf_reset(&p);
    for (int i = 0; i < 84; i++)
        buf_adds(&p, "\xe4\xb8\xad");
    buf_adds(&p, ".md");
    CHECK_INT(check("rules", p.data, &out, &err), 0);
    buf_reset(&p);
    for (int i = 0; i < 84; i++)
        buf_adds(&p, "\xe4\xb8\xad");
    buf_adds(&p, "a.md");
    REFUSED("rules", p.data, "A file or folder name must be at most 255 bytes (got 256)");
    /* 252 CJK characters (under 255 characters, 756 bytes) in one name: refused */
    buf_reset(&p);
    for (int i = 0; i < 252; i++)
        buf_adds(&p, "\xe4\xb8\xad");
    buf_adds(&p, ".md");
    REFUSED("rules", p.data, "A file or folder name must be at most 255 bytes (got 759)");
    /* the same in a folder name; split over a folder and a file, they pass */
    buf_reset(&p);
    for (int i = 0; i < 100; i++)
        buf_adds(&p, "\xe4\xb8\xad");
    buf_adds(&p, "/a.md");
    REFUSED("experiences", p.data, "A file or folder name must be at most 255 bytes (got 300)");
    buf_reset(&p);
    for (int i = 0; i < 84; i++)
        buf_adds(&p, "\xe4\xb8\xad");
    buf_addch(&p, '/');
    for (int i = 0; i < 84; i++)
        buf_adds(&p, "\xe4\xb8\xad");
    buf_adds(&p, ".md");
    CHECK_INT(check("experiences", p.data, &out, &err), 0);
    buf_release(&p);
}

static void test_accepted_and_normalised(void)
{
    ACCEPTED("rules", "a.md", "a.md");
    ACCEPTED("experiences", "a.md", "a.md");
    ACCEPTED("experiences", "folder/a.md", "folder/a.md");
    /* Unicode names and spaces are allowed */
    ACCEPTED("rules", "\xe8\xa7\x84\xe5\x88\x99.md", "\xe8\xa7\x84\xe5\x88\x99.md"); /* 规则.md */
    ACCEPTED("experiences",
             "\xe7\xbb\x8f\xe9\xaa\x8c/\xe6\x95\xb0\xe6\x8d\xae "
             "\xe5\x88\x86\xe6\x9e\x90.md",
             "\xe7\xbb\x8f\xe9\xaa\x8c/\xe6\x95\xb0\xe6\x8d\xae \xe5\x88\x86\xe6\x9e\x90.md");
    ACCEPTED("rules", "my rule with spaces.md", "my rule with spaces.md");
    ACCEPTED("experiences", "sub dir/emoji \xf0\x9f\x98\x80.md",
             "sub dir/emoji \xf0\x9f\x98\x80.md");
    ACCEPTED("rules", "caf\xc3\xa9.md", "caf\xc3\xa9.md");
    /* normalisation: empty and "." segments vanish */
    ACCEPTED("experiences", "a//b.md", "a/b.md");
    ACCEPTED("experiences", "./a.md", "a.md");
    ACCEPTED("rules", "./a.md", "a.md");
    ACCEPTED("experiences", "a/./b.md", "a/b.md");
    ACCEPTED("experiences", "./a//./b.md", "a/b.md");
    ACCEPTED("rules", "a.md/", "a.md");
    /* dots inside names are not traversal */
    ACCEPTED("rules", "..a.md", "..a.md");
    ACCEPTED("rules", "a..b.md", "a..b.md");
    ACCEPTED("experiences", "...x/a.md", "...x/a.md");
    /* out is reset on every call; err is emptied on success */
    check("rules", "x.txt", &out, &err);
    ACCEPTED("rules", "b.md", "b.md");
    CHECK_STR(err.data, "");
    /* and out is emptied on failure */
    CHECK_INT(check("rules", "a/b.md", &out, &err), -1);
    CHECK_STR(out.data, "");
}

static void test_path_stem(void)
{
    struct buf s;
    buf_init(&s, 1024);
    path_stem("folder/name.md", &s);
    CHECK_STR(s.data, "name");
    path_stem("name.md", &s);
    CHECK_STR(s.data, "name");
    path_stem("a/b/c.md", &s);
    CHECK_STR(s.data, "c");
    path_stem("noext", &s);
    CHECK_STR(s.data, "noext");
    path_stem("dir/x.txt", &s);
    CHECK_STR(s.data, "x.txt");
    path_stem("a.md.md", &s);
    CHECK_STR(s.data, "a.md");
    path_stem("\xe7\xbb\x8f\xe9\xaa\x8c/\xe6\x95\xb0\xe6\x8d\xae.md", &s);
    CHECK_STR(s.data, "\xe6\x95\xb0\xe6\x8d\xae");
    path_stem("dir/", &s);
    CHECK_STR(s.data, "");
    buf_release(&s);
}

/* path_check: the message, plus a stable key and the params it names. */
static void test_error_keys(void)
{
    struct error e;
    struct buf name;
    error_init(&e);
    CHECK_INT(path_check("experiences", "../a.md", &out, &e), -1);
    CHECK_STR(e.key, "path_traversal");
    CHECK_STR(e.message.data, "Path traversal segment '..' in: '../a.md'");
    CHECK_STR(json_object_to_json_string_ext(e.params, JSON_C_TO_STRING_PLAIN),
              "{\"path\":\"..\\/a.md\"}");
    CHECK_INT(path_check("rules", "a.txt", &out, &e), -1);
    CHECK_STR(e.key, "path_not_md");
    CHECK(e.params == NULL);
    CHECK_INT(path_check("notes", "a.md", &out, &e), -1);
    CHECK_STR(e.key, "invalid_category");
    buf_init(&name, 1024);
    for (int i = 0; i < 300; i++)
        buf_addch(&name, 'n');
    buf_adds(&name, ".md");
    CHECK_INT(path_check("experiences", name.data, &out, &e), -1);
    CHECK_STR(e.key, "path_too_long");
    CHECK_STR(json_object_to_json_string_ext(e.params, JSON_C_TO_STRING_PLAIN), "{\"max\":255}");
    /* accepted: no key, no params, an empty message */
    CHECK_INT(path_check("experiences", "a/b.md", &out, &e), 0);
    CHECK(e.key == NULL);
    CHECK(e.params == NULL);
    CHECK_STR(e.message.data, "");
    buf_release(&name);
    error_release(&e);
}

static void test_slug(void)
{
    static const char *const cases[][2] = {
        /* English: lower-case ASCII words, punctuation dropped */
        {"Group and aggregate: revenue — per region!", "group-and-aggregate-revenue-per-region"},
        {"  C++ / Python's \"pandas\" 101...  ", "c-python-s-pandas-101"},
        /* Chinese: the title's own characters, CJK punctuation a separator */
        {"按地区汇总季度收入：以柱状图呈现。", "按地区汇总季度收入-以柱状图呈现"},
        {"《销售》分析，（第二版）", "销售-分析-第二版"},
        /* mixed: mostly ASCII keeps the ASCII words; mostly Chinese keeps all */
        {"Pandas groupby 分组", "pandas-groupby"},
        {"使用Pandas做分组聚合并画柱状图", "使用pandas做分组聚合并画柱状图"},
        {"Café au lait", "caf-au-lait"},
        /* never a hidden file, a separator or a ".md" of its own */
        {"../../etc/passwd.md", "etc-passwd-md"},
        /* very long: at most PATH_SLUG_MAX_BYTES, cut before a word */
        {"Group and aggregate: revenue per region and quarter — shown as a bar chart",
         "group-and-aggregate-revenue-per-region-and-quarter-shown-as"},
        /* very long Chinese: cut at a character, never inside one */
        {"这是一个非常非常非常非常非常非常非常非常非常非常长的中文标题没有任何标点符号",
         "这是一个非常非常非常非常非常非常非常非常"},
        /* broken UTF-8 is a separator, never copied */
        {"abc\xff\xfe"
         "def",
         "abc-def"},
        /* a lead byte whose continuation is missing (found by fuzz_paths) */
        {"\xe5\x9c\xb0\xe5\xe6\xb6\x94\xe5\x9c\xb0", "地-涔地"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CHECK_INT(path_slug(cases[i][0], &out), 0);
        CHECK_STR(out.data, cases[i][1]);
        CHECK(out.len <= PATH_SLUG_MAX_BYTES);
    }
    /* punctuation only, empty, NULL: nothing, the caller names it */
    CHECK_INT(path_slug(" :—!?。，…/\\.. ", &out), -1);
    CHECK_STR(out.data, "");
    CHECK_INT(path_slug("", &out), -1);
    CHECK_INT(path_slug(NULL, &out), -1);
    CHECK_STR(out.data, "");
    CHECK_INT(path_slug("Supercalifragilisticexpialidocious-is-not-a-word-but-this-one-is-even-"
                        "longerwithoutanyspacesatallxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                        &out),
              0);
    CHECK(out.len <= PATH_SLUG_MAX_BYTES && out.len >= 50);
    CHECK(out.data[out.len - 1] != '-');
    /* a long word alone is cut by bytes */
    CHECK_INT(
        path_slug("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                  &out),
        0);
    CHECK_INT((long)out.len, PATH_SLUG_MAX_BYTES);
}

int main(void)
{
    buf_init(&out, 4096);
    buf_init(&err, 4096);
    test_categories();
    test_reference_messages();
    test_refused_characters();
    test_length_limit();
    test_accepted_and_normalised();
    test_path_stem();
    test_error_keys();
    test_slug();
    buf_release(&out);
    buf_release(&err);
    return test_summary();
}
