/* test_fileset: the bounded in-memory file set of the interop formats
 * (fcgi/base/fileset.c): names checked (no absolute, "..", backslash or
 * control character), budgets, a tar written and read back byte for byte,
 * gzip read, and a damaged archive refused whole. */
#include "harness.h"
#include "base/buf.h"
#include "base/fileset.h"

#include <stdlib.h>
#include <string.h>

static void test_names(void)
{
    CHECK(fileset_name_valid("a.md"));
    CHECK(fileset_name_valid(".cursor/rules/x.mdc"));
    CHECK(fileset_name_valid("分析/SKILL.md"));
    CHECK(!fileset_name_valid(""));
    CHECK(!fileset_name_valid("/etc/passwd"));
    CHECK(!fileset_name_valid("../x"));
    CHECK(!fileset_name_valid("a/../x"));
    CHECK(!fileset_name_valid("a/./x"));
    CHECK(!fileset_name_valid("a//x"));
    CHECK(!fileset_name_valid("a/"));
    CHECK(!fileset_name_valid("a\\b"));
    CHECK(!fileset_name_valid("a\nb"));
    CHECK(!fileset_name_valid("\xff.md"));
    CHECK(!fileset_name_valid("1/2/3/4/5/6/7/8/9/x"));
    CHECK(fileset_name_valid("1/2/3/4/5/6/7/8/x"));
}

static void test_budgets(void)
{
    struct fileset fs;
    const char *why = NULL;
    char *big = calloc(1, FILESET_MAX_FILE + 1);
    fileset_init(&fs);
    CHECK_INT(fileset_add(&fs, "a", "x", 1, &why), 0);
    CHECK_INT(fileset_add(&fs, "a", "y", 1, &why), -1);
    CHECK_STR(why, "the name comes twice");
    CHECK_INT(fileset_add(&fs, "b", big, FILESET_MAX_FILE + 1, &why), -1);
    CHECK_STR(why, "larger than 1 MiB");
    CHECK_INT(fileset_add(&fs, "b", big, FILESET_MAX_FILE, &why), 0);
    CHECK_INT((long long)fs.n, 2);
    CHECK(fileset_find(&fs, "b") && fileset_find(&fs, "b")->len == FILESET_MAX_FILE);
    fileset_release(&fs);
    free(big);
}

static void test_tar_round_trip(void)
{
    struct fileset fs, back;
    struct buf tar, why;
    const char *w;
    fileset_init(&fs);
    fileset_init(&back);
    buf_init(&tar, 1 << 20);
    buf_init(&why, 1024);
    fileset_add(&fs, ".cursor/rules/roi.mdc", "---\nalwaysApply: true\n---\nx\n", 27, &w);
    fileset_add(&fs, "分析/SKILL.md", "body\0with nul", 13, &w);
    CHECK_INT(fileset_to_tar(&fs, 1700000000, &tar), 0);
    CHECK(tar.len % 512 == 0 && tar.len >= 4 * 512);
    CHECK_INT(fileset_from_tar(tar.data, tar.len, &back, &why), 0);
    CHECK_INT((long long)back.n, 2);
    CHECK_STR(back.v[0].name, ".cursor/rules/roi.mdc");
    CHECK_STR(back.v[1].name, "分析/SKILL.md");
    CHECK(back.v[1].len == 13 && memcmp(back.v[1].data, "body\0with nul", 13) == 0);
    fileset_release(&back);
    /* a damaged archive: refused whole, the set left empty */
    buf_reset(&why);
    CHECK_INT(fileset_from_tar(tar.data, 700, &back, &why), -1);
    CHECK_INT((long long)back.n, 0);
    CHECK(strstr(why.data, "tar") != NULL);
    buf_reset(&why);
    CHECK_INT(fileset_from_tar("plain text, no archive", 22, &back, &why), -1);
    CHECK(strncmp(why.data, "not a tar archive", 17) == 0);
    fileset_release(&fs);
    buf_release(&tar);
    buf_release(&why);
}

int main(void)
{
    test_names();
    test_budgets();
    test_tar_round_trip();
    return test_summary();
}
