/* test_when: the moments of expiry and review (domain/when.h): dates and
 * UTC times parsed into one canonical form, everything else refused; a
 * document's front matter given an entry's time, unchanged when it already
 * says it. */
#include "harness.h"
#include "base/buf.h"
#include "domain/when.h"

#include <string.h>

static void parses(const char *in, const char *want)
{
    char out[WHEN_TEXT];
    int rc = when_parse(in, strlen(in), out);
    CHECK(rc == 0);
    if (rc == 0)
        CHECK_STR(out, want);
}

static void refuses(const char *in)
{
    char out[WHEN_TEXT];
    CHECK(when_parse(in, strlen(in), out) == -1);
}

static void document_is(const char *doc, const char *expires, const char *review, int pinned,
                        const char *want)
{
    struct buf out;
    buf_init(&out, 1 << 20);
    when_document(doc, expires, review, pinned, &out);
    CHECK_STR(out.data, want);
    buf_release(&out);
}

int main(void)
{
    parses("2031-06-01", "2031-06-01T00:00:00Z");
    parses("2031-06-01T08:30:59Z", "2031-06-01T08:30:59Z");
    parses("2032-02-29", "2032-02-29T00:00:00Z"); /* a leap year */
    parses("2000-02-29", "2000-02-29T00:00:00Z");
    refuses("2031-02-29");
    refuses("1900-02-29");
    refuses("2031-13-01");
    refuses("2031-04-31");
    refuses("2031-06-01T24:00:00Z");
    refuses("2031-06-01T08:30:60Z");
    refuses("2031-06-01T08:30:00");
    refuses("2031-06-01T08:30:00+02:00");
    refuses("2031-06-01 08:30:00Z");
    refuses("1969-12-31");
    refuses("31/12/2031");
    refuses("tomorrow");
    refuses("");
    refuses("2031-6-1");
    refuses("+031-06-01");

    /* already says it: the very bytes */
    document_is("---\ntitle: A\nexpires_at: 2031-06-01\n---\nBody.\n", "2031-06-01T00:00:00Z", NULL,
                0, "---\ntitle: A\nexpires_at: 2031-06-01\n---\nBody.\n");
    document_is("---\ntitle: A\n---\nBody.\n", NULL, NULL, 0, "---\ntitle: A\n---\nBody.\n");
    document_is("No front matter.\n", NULL, NULL, 0, "No front matter.\n");
    /* another time: set, kept in the order of the other keys */
    document_is("---\ntitle: A\n---\nBody.\n", "2031-06-01T00:00:00Z", NULL, 1,
                "---\ntitle: A\nexpires_at: 2031-06-01T00:00:00Z\npinned: true\n---\nBody.\n");
    document_is("---\ntitle: A\nexpires_at: 2031-06-01\npinned: true\n---\nBody.\n", NULL,
                "2031-07-01T00:00:00Z", 0,
                "---\ntitle: A\nreview_after: 2031-07-01T00:00:00Z\n---\nBody.\n");
    document_is("Only a body.\n", "2031-06-01T00:00:00Z", NULL, 0,
                "---\nexpires_at: 2031-06-01T00:00:00Z\n---\nOnly a body.\n");
    return test_summary();
}
