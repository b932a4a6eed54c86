/* interop: knowledge as the files coding agents read (docs/agents.md
 * "Exporting to Claude Code, Cursor, Codex"): rules as AGENTS.md or
 * CLAUDE.md sections and as Cursor's .cursor/rules/NAME.mdc, experiences as
 * Agent Skills folders (NAME/SKILL.md), and back. No store and no I/O: the
 * conversion between knowledge entries and a set of files. */
#ifndef KNOWHUB_INTEROP_H
#define KNOWHUB_INTEROP_H

#include <stddef.h>

#include "base/buf.h"
#include "base/fileset.h"
#include "domain/knowledge.h"

enum interop_format {
    INTEROP_NONE = 0,
    INTEROP_AGENTS_MD, /* one AGENTS.md: rules as ## sections */
    INTEROP_CLAUDE_MD, /* one CLAUDE.md: the same sections */
    INTEROP_CURSOR,    /* .cursor/rules/NAME.mdc, one per rule */
    INTEROP_SKILLS     /* NAME/SKILL.md, one per experience */
};

/* The name of the export's report inside an archive (cursor, skills). */
#define INTEROP_REPORT_NAME "KNOWHUB-EXPORT.md"
/* Agent Skills' bounds (agentskills.io specification). */
#define INTEROP_SKILL_NAME_MAX 64
#define INTEROP_SKILL_DESCRIPTION_MAX 1024

/* "agents_md" -> INTEROP_AGENTS_MD ...; INTEROP_NONE for any other name. */
enum interop_format interop_format_parse(const char *name);
const char *interop_format_name(enum interop_format f);
/* 1 for the formats of several files (cursor, skills: a tar over HTTP). */
int interop_format_is_archive(enum interop_format f);
/* The category a format carries ("rules" or "experiences"). */
const char *interop_format_category(enum interop_format f);
/* What the format cannot carry, one sentence (static). */
const char *interop_not_carried(enum interop_format f);

/* 1 when name is an Agent Skills name: 1-64 of a-z, 0-9 and '-', no
 * leading, trailing or doubled '-'. */
int interop_skill_name_valid(const char *name);

struct interop_export;

/* A new export of space in format f; interop_export_free frees it. */
struct interop_export *interop_export_new(enum interop_format f, const char *space);
/* Add one active entry (its fields as document_fill sets them). */
void interop_export_add(struct interop_export *ex, const struct knowledge *k);
/* Leave an active entry out, why listed with its path in the report. */
void interop_export_leave_out(struct interop_export *ex, const struct knowledge *k,
                              const char *why);
/* The files of the export into out: AGENTS.md or CLAUDE.md alone (its
 * first lines say what was left out), or the .mdc / SKILL.md files and
 * INTEROP_REPORT_NAME. -1 when AGENTS.md / CLAUDE.md would pass 1 MiB. */
int interop_export_finish(struct interop_export *ex, struct fileset *out);
/* Entries written, and entries left out (of the other category or for a
 * reason of their own), so far. */
long interop_export_written(const struct interop_export *ex);
long interop_export_left_out(const struct interop_export *ex);
void interop_export_free(struct interop_export *ex);

/* One document to import: category/path and its Markdown text, with front
 * matter; from names the file (and section) it came from. All owned. */
struct interop_doc {
    char *category, *path, *text, *from;
    size_t len;
};

struct interop_docs {
    struct interop_doc *v;
    size_t n, cap;
};

void interop_docs_init(struct interop_docs *d);
void interop_docs_release(struct interop_docs *d);

/* The format a set of files is in, by their names: a .mdc file makes it
 * cursor, a SKILL.md skills, a single AGENTS.md or CLAUDE.md those;
 * INTEROP_NONE otherwise. */
enum interop_format interop_detect(const struct fileset *fs);

/* Read the files of fs as format f into documents. What is not turned into
 * a document gets one line in report: "skipped NAME: why" (not of this
 * format: counted in *skipped) or "refused NAME: why" (of this format but
 * malformed: invalid UTF-8, front matter that is not valid YAML or lacks
 * a required field, a name taken twice; counted in *refused); "note NAME:
 * ..." lines say what was dropped from a document that is imported. */
void interop_import_parse(enum interop_format f, const struct fileset *fs, struct interop_docs *out,
                          struct buf *report, long *skipped, long *refused);

#endif
