/* paths: validation of file-view paths, with the checks in the order and
 * the messages docs/knowledge-files.md lists, including the characters
 * KnowHub refuses (backslash, control characters, a file or folder name over
 * 255 bytes, which no file system holds). Paths are keys, never
 * opened as files; export confines them again when it writes. */
#ifndef KNOWHUB_PATHS_H
#define KNOWHUB_PATHS_H

/* A file or folder name's bytes at most: what a file system holds. */
#define PATH_SEGMENT_MAX_BYTES 255

#include "base/buf.h"
#include "base/error.h"

/* Return 1 for "rules" and "experiences". */
int category_valid(const char *category);

/* Check category and path; on success write the normalised path (no empty or
 * "." segments) to out and return 0; else set err (INVALID_REQUEST with its
 * key and parameters, docs/api.md "Errors") and return -1. */
int path_check(const char *category, const char *path, struct buf *out, struct error *err);

/* The longest file name path_slug makes, in bytes (".md" not counted). */
#define PATH_SLUG_MAX_BYTES 60

/* A short file name (no ".md") for a document titled title, into out
 * (reset first): lower-case ASCII words joined by '-' when the title is
 * mostly ASCII (its ASCII letters and digits at least as many as its other
 * letters), else the title's own characters with every run of spaces and
 * punctuation (ASCII, general, CJK and fullwidth) made one '-'. At most
 * PATH_SLUG_MAX_BYTES bytes, cut before a word (ASCII) or a character
 * that would go over; no leading or trailing '-'. Return 0, or -1 with out
 * empty when the title has no letter or digit (the caller picks a name). */
int path_slug(const char *title, struct buf *out);

/* The file stem of a path ("folder/name.md" -> "name"), into out. */
void path_stem(const char *path, struct buf *out);

#endif
