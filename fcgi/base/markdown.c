/* markdown: Markdown to safe HTML with libcmark. */
#include "base/markdown.h"

#include <cmark.h>
#include <stdlib.h>

int markdown_to_html(const char *md, size_t n, struct buf *out)
{
    /* CMARK_OPT_UNSAFE is not given: raw HTML and dangerous URLs are dropped. */
    char *html = cmark_markdown_to_html(md, n, CMARK_OPT_DEFAULT | CMARK_OPT_SMART);
    int rc;
    if (!html)
        return -1;
    rc = buf_adds(out, html);
    free(html);
    return rc;
}
