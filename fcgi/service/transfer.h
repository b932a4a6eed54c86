/* transfer: import and export of the knowledge directory layout
 * (rules/NAME.md, experiences/NAME.md, experiences/FOLDER/NAME.md) for one space,
 * used by `knowhub import` and `knowhub export`. Every file is reported. */
#ifndef KNOWHUB_TRANSFER_H
#define KNOWHUB_TRANSFER_H

#include <stdio.h>

#include "domain/interop.h"

struct store;
struct svc_ctx;

enum on_conflict { ON_CONFLICT_SKIP, ON_CONFLICT_OVERWRITE, ON_CONFLICT_RENAME };

/* What import reads: a knowledge tree (a folder with rules/ or experiences/),
 * a plain folder of notes (every .md below it, experiences unless its front
 * matter says "category: rule"), or JSON Lines as export writes them. */
enum import_layout { IMPORT_TREE, IMPORT_PLAIN, IMPORT_JSONL };

struct import_options {
    const char *space;            /* created if needed */
    enum on_conflict on_conflict; /* a path already taken by another text */
    int flatten;                  /* plain folders: the file name alone as the path */
    const struct svc_ctx *caller; /* POST /api/knowledge/import: the caller, whose review
                                   * policy holds each document as a proposal; NULL for
                                   * the operator's CLI (only the poisoning screen holds) */
    int no_conflict_check;        /* 1: no conflict check of the imported documents */
};

struct transfer_counts {
    long imported, updated, unchanged, skipped, refused;
    long held;         /* held for review as proposals (a caller's policy), not imported yet */
    long not_markdown; /* files skipped with a line: they are not .md */
    long hidden;       /* plain folders: names starting with '.' (.git), left out silently */
    long outside;      /* knowledge trees: what is beside rules/ and experiences/ */
    long exported;
    long conflicts;     /* candidates the conflict check found (docs/conflicts.md) */
    long linked;        /* links made from the documents' front matter */
    long link_warnings; /* front matter links that could not be made (a line each) */
};

enum transfer_status {
    TRANSFER_OK,
    TRANSFER_SOURCE_FAILED, /* the source cannot be read: *source_errno says why */
    TRANSFER_STORE_FAILED,  /* the database failed (store_errmsg) */
    TRANSFER_TOO_LARGE      /* an interop export's AGENTS.md / CLAUDE.md would pass 1 MiB */
};

/* The layout of src: "-" (standard input) and anything that is not a
 * directory are JSON Lines; a directory holding rules/ or experiences/ is a
 * knowledge tree; any other directory a plain folder. -1 with errno when
 * src does not exist or cannot be reached. */
int transfer_import_layout(const char *src, enum import_layout *layout);

/* Import src (of the given layout) into opt->space, writing one line per
 * document to report ("imported rules/a.md", "refused x: why", "skipped
 * x: not Markdown", ...). A refused document never stops the import; a
 * database failure or a read error rolls back the current batch (import
 * commits every 500 documents). */
enum transfer_status transfer_import(struct store *st, const struct import_options *opt,
                                     const char *src, enum import_layout layout, FILE *report,
                                     struct transfer_counts *counts, int *source_errno);

/* Write every active document of space to out as JSON Lines, the lines of
 * GET /api/knowledge/export (transfer_import reads them back). 0, or -1
 * when a write failed (*write_errno says why) or the database did
 * (*write_errno 0): out then holds an export cut short. */
int transfer_export_jsonl(struct store *st, const char *space, FILE *out,
                          struct transfer_counts *counts, int *write_errno);

/* Write every active document of space under dir, byte for byte as stored. */
int transfer_export(struct store *st, const char *space, const char *dir, FILE *report,
                    struct transfer_counts *counts);

/* ---- the interop formats (docs/agents.md): AGENTS.md, CLAUDE.md, Cursor
 * rules, Agent Skills ---- */

/* The files of space in format f into out (cursor, skills: with the
 * report INTEROP_REPORT_NAME); *written and *left_out count entries.
 * TRANSFER_STORE_FAILED when the database fails, TRANSFER_TOO_LARGE when
 * AGENTS.md / CLAUDE.md would pass 1 MiB. */
enum transfer_status transfer_export_interop(struct store *st, const char *space,
                                             enum interop_format f, struct fileset *out,
                                             long *written, long *left_out);

/* Import the files of fs, in format f, into opt->space: one line per file
 * or document to report, as transfer_import writes them (the documents
 * named by the file and section they came from), counted in counts. With
 * rules_allowed 0 a rule is refused ("rules are written by admins only").
 * Documents go in one transaction when there are at most 500 of them. */
enum transfer_status transfer_import_interop(struct store *st, const struct import_options *opt,
                                             enum interop_format f, const struct fileset *fs,
                                             int rules_allowed, FILE *report,
                                             struct transfer_counts *counts);

#endif
