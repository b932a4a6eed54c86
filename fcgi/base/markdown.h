/* markdown: Markdown to safe HTML with libcmark. Raw HTML is replaced by a
 * comment and javascript:, vbscript:, file: and data: (non-image) links are
 * emptied (cmark's safe mode), so the result can be shown as is. */
#ifndef KNOWHUB_MARKDOWN_H
#define KNOWHUB_MARKDOWN_H

#include <stddef.h>

#include "base/buf.h"

/* Append the safe HTML rendering of md[0..n) to out; -1 when out is full. */
int markdown_to_html(const char *md, size_t n, struct buf *out);

#endif
