/* test_buf: the bounded growable buffer (growth, the maximum refusing an
 * append whole, the refusal sticking until reset or release, formatted
 * appends, detach, reset, release and reuse). */
#include "base/buf.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static void test_init_empty(void)
{
    struct buf b;
    buf_init(&b, 16);
    CHECK(b.data != NULL);
    CHECK_STR(b.data, "");
    CHECK_INT(b.len, 0);
    CHECK_INT(b.max, 16);
    buf_reset(&b); /* reset before any storage must keep data valid */
    CHECK_STR(b.data, "");
    buf_release(&b);
    CHECK(b.data != NULL);
    CHECK_INT(b.len, 0);
}

static void test_growth(void)
{
    struct buf b;
    char expect[1001];
    buf_init(&b, 1 << 20);
    for (int i = 0; i < 1000; i++) {
        expect[i] = (char)('a' + i % 26);
        if (buf_addch(&b, expect[i]))
            break;
    }
    expect[1000] = '\0';
    CHECK_INT(b.len, 1000);
    CHECK(b.cap > 1000);
    CHECK_INT(strlen(b.data), 1000); /* NUL-terminated after every append */
    CHECK_STR(b.data, expect);

    CHECK_INT(buf_add(&b, "xyz", 3), 0);
    CHECK_INT(b.len, 1003);
    CHECK(memcmp(b.data + 1000, "xyz", 4) == 0);
    /* Appending nothing is fine and changes nothing. */
    CHECK_INT(buf_add(&b, "", 0), 0);
    CHECK_INT(b.len, 1003);
    /* Binary data with a NUL inside is kept as bytes. */
    CHECK_INT(buf_add(&b, "p\0q", 3), 0);
    CHECK_INT(b.len, 1006);
    CHECK(memcmp(b.data + 1003, "p\0q", 4) == 0);
    buf_release(&b);
}

static void test_max_refuses_whole(void)
{
    struct buf b;
    buf_init(&b, 8);
    CHECK_INT(buf_adds(&b, "12345"), 0);
    /* 5 + 4 > 8: refused whole, buffer unchanged (no partial "123") */
    CHECK_INT(buf_adds(&b, "6789"), -1);
    CHECK_INT(b.len, 5);
    CHECK_STR(b.data, "12345");
    /* sticky: once refused, every later append is refused too, even one
     * that would fit, and the text stays as it was */
    CHECK_INT(buf_failed(&b), 1);
    CHECK_INT(buf_adds(&b, "678"), -1);
    CHECK_INT(buf_add(&b, "", 0), -1);
    CHECK_STR(b.data, "12345");
    CHECK_INT(b.len, 5);
    /* buf_reset clears the failure */
    buf_reset(&b);
    CHECK_INT(buf_failed(&b), 0);
    CHECK_INT(buf_adds(&b, "12345"), 0);
    /* exactly up to the maximum is allowed */
    CHECK_INT(buf_adds(&b, "678"), 0);
    CHECK_INT(b.len, 8);
    CHECK_STR(b.data, "12345678");
    CHECK_INT(buf_failed(&b), 0);
    /* an empty append at the maximum is still fine */
    CHECK_INT(buf_add(&b, "", 0), 0);
    CHECK_INT(buf_addch(&b, 'x'), -1);
    CHECK_INT(buf_failed(&b), 1);
    CHECK_INT(buf_addf(&b, "%d", 1), -1);
    CHECK_INT(buf_add(&b, "x", 1), -1);
    CHECK_STR(b.data, "12345678");
    CHECK_INT(b.len, 8);
    /* buf_release clears it too */
    buf_release(&b);
    CHECK_INT(buf_failed(&b), 0);
    CHECK_INT(buf_adds(&b, "ok"), 0);
    buf_release(&b);

    /* A huge n must not wrap around the size arithmetic. */
    buf_init(&b, 8);
    CHECK_INT(buf_adds(&b, "ab"), 0);
    CHECK_INT(buf_add(&b, "x", (size_t)-1), -1);
    CHECK_INT(buf_add(&b, "x", (size_t)-2), -1);
    CHECK_STR(b.data, "ab");
    buf_release(&b);

    /* max 0: nothing at all fits */
    buf_init(&b, 0);
    CHECK_INT(buf_addch(&b, 'a'), -1);
    CHECK_STR(b.data, "");
    CHECK_INT(b.len, 0);
    buf_release(&b);
}

/* buf_add_one_line is all or nothing, and a refusal sticks; detach clears it. */
static void test_sticky_one_line_detach(void)
{
    struct buf b;
    char *p;
    buf_init(&b, 8);
    CHECK_INT(buf_adds(&b, "ab"), 0);
    CHECK_INT(buf_add_one_line(&b, "cd\nefgh"), -1);
    CHECK_STR(b.data, "ab");
    CHECK_INT(buf_failed(&b), 1);
    CHECK_INT(buf_add_one_line(&b, "c"), -1);
    CHECK_STR(b.data, "ab");
    /* buf_truncate drops a tail and clears the failure */
    buf_truncate(&b, 1);
    CHECK_INT(buf_failed(&b), 0);
    CHECK_STR(b.data, "a");
    CHECK_INT(buf_adds(&b, "b"), 0);
    buf_truncate(&b, 5); /* past the end: nothing happens */
    CHECK_INT(b.len, 2);
    p = buf_detach(&b, NULL);
    CHECK_STR(p, "ab");
    free(p);
    CHECK_INT(buf_failed(&b), 0);
    CHECK_INT(buf_add_one_line(&b, "c\nd"), 0);
    CHECK_STR(b.data, "c d");
    buf_release(&b);
}

static void test_addf(void)
{
    struct buf b;
    buf_init(&b, 64);
    CHECK_INT(buf_addf(&b, "%s=%d", "n", 42), 0);
    CHECK_STR(b.data, "n=42");
    CHECK_INT(buf_addf(&b, ",%zu,%ld,%c", (size_t)7, -3L, 'z'), 0);
    CHECK_STR(b.data, "n=42,7,-3,z");
    CHECK_INT(b.len, strlen("n=42,7,-3,z"));
    /* a formatted append that would pass max is refused whole */
    CHECK_INT(buf_addf(&b, "%0100d", 1), -1);
    CHECK_STR(b.data, "n=42,7,-3,z");
    CHECK_INT(b.len, 11);
    CHECK_INT(buf_failed(&b), 1);
    CHECK_INT(buf_addf(&b, "%d", 1), -1); /* sticky */
    CHECK_STR(b.data, "n=42,7,-3,z");
    buf_reset(&b);
    CHECK_INT(buf_adds(&b, "n=42,7,-3,z"), 0);
    /* fills exactly to max */
    CHECK_INT(buf_addf(&b, "%053d", 5), 0);
    CHECK_INT(b.len, 64);
    CHECK_INT(b.data[63], '5');
    CHECK_INT(b.data[64], '\0');
    buf_release(&b);

    /* Long formatted output needing several doublings. */
    buf_init(&b, 1 << 16);
    CHECK_INT(buf_addf(&b, "%5000s|", "x"), 0);
    CHECK_INT(b.len, 5001);
    CHECK_INT(b.data[4999], 'x');
    CHECK_INT(b.data[5000], '|');
    buf_release(&b);
}

static void test_detach(void)
{
    struct buf b;
    size_t len = 99;
    char *p;
    buf_init(&b, 100);
    buf_adds(&b, "hello");
    p = buf_detach(&b, &len);
    CHECK_STR(p, "hello");
    CHECK_INT(len, 5);
    /* b is re-initialised, with the same maximum */
    CHECK_INT(b.len, 0);
    CHECK_STR(b.data, "");
    CHECK_INT(b.max, 100);
    CHECK(b.data != p);
    CHECK_INT(buf_adds(&b, "again"), 0);
    CHECK_STR(b.data, "again");
    CHECK_STR(p, "hello"); /* the detached storage is independent */
    free(p);
    buf_release(&b);

    /* Detaching an empty buffer still gives the caller a string it may free. */
    buf_init(&b, 10);
    p = buf_detach(&b, NULL);
    CHECK(p != NULL);
    CHECK_STR(p, "");
    free(p);
    buf_release(&b);
}

static void test_reset_release_reuse(void)
{
    struct buf b;
    size_t cap;
    buf_init(&b, 1000);
    buf_adds(&b, "some text");
    cap = b.cap;
    buf_reset(&b);
    CHECK_INT(b.len, 0);
    CHECK_STR(b.data, "");
    CHECK_INT(b.cap, cap); /* reset keeps the storage */
    CHECK_INT(buf_adds(&b, "new"), 0);
    CHECK_STR(b.data, "new");

    buf_release(&b);
    CHECK_INT(b.len, 0);
    CHECK_STR(b.data, "");
    CHECK_INT(b.max, 1000); /* release keeps the maximum: reusable as is */
    CHECK_INT(buf_adds(&b, "reused"), 0);
    CHECK_STR(b.data, "reused");
    CHECK_INT(b.len, 6);
    buf_release(&b);
    buf_release(&b); /* releasing twice is harmless */
    CHECK_STR(b.data, "");
}

int main(void)
{
    test_init_empty();
    test_growth();
    test_max_refuses_whole();
    test_addf();
    test_sticky_one_line_detach();
    test_detach();
    test_reset_release_reuse();
    return test_summary();
}
