/* fileset: a bounded set of named files held in memory, as the interop
 * formats move them (docs/agents.md "Exporting to Claude Code, Cursor,
 * Codex"): read from and written to a tar archive (libarchive, the only
 * file with archive.h) or a directory. Every name is checked: relative, no
 * "..", no backslash or control character, valid UTF-8. */
#ifndef KNOWHUB_FILESET_H
#define KNOWHUB_FILESET_H

#include <stddef.h>
#include <stdio.h>

#include "base/buf.h"

#define FILESET_MAX_FILES 5000               /* files in one set */
#define FILESET_MAX_FILE (1024 * 1024)       /* bytes of one file */
#define FILESET_MAX_TOTAL (32 * 1024 * 1024) /* bytes of all files, unpacked */
#define FILESET_MAX_NAME 1024                /* bytes of one name */
#define FILESET_MAX_DEPTH 8                  /* folders of a name */

struct fileset_entry {
    char *name; /* owned: "a/b.md", checked by fileset_name_valid */
    char *data; /* owned, NUL-terminated (the NUL not counted) */
    size_t len;
};

struct fileset {
    struct fileset_entry *v;
    size_t n, cap;
    size_t total; /* bytes of every data */
};

void fileset_init(struct fileset *fs);
void fileset_release(struct fileset *fs);

/* 1 when name is a relative file name a set may hold: at most
 * FILESET_MAX_NAME bytes of valid UTF-8, no empty, "." or ".." segment,
 * no leading '/', no backslash or control character, at most
 * FILESET_MAX_DEPTH folders. */
int fileset_name_valid(const char *name);

/* Add a copy of data as name. -1 with *why (static text) when the name is
 * not valid, already in the set, or a budget would be passed. */
int fileset_add(struct fileset *fs, const char *name, const char *data, size_t len,
                const char **why);

/* The entry named name, or NULL. */
const struct fileset_entry *fileset_find(const struct fileset *fs, const char *name);

/* Read a tar archive (plain or gzip-compressed) of len bytes into fs.
 * Directories are passed over; a member that is a link, a device or not
 * regular, a name fileset_add refuses, or a budget passed fails the whole
 * read: -1 with why (a sentence naming the member), fs then emptied.
 * The entries come sorted by name. */
int fileset_from_tar(const char *data, size_t len, struct fileset *fs, struct buf *why);

/* Write fs as a GNU tar archive into out (mode 0644, the given time). -1
 * when out's maximum is reached or libarchive fails. */
int fileset_to_tar(const struct fileset *fs, long mtime, struct buf *out);

/* Read every regular file below dir (names relative to it, sorted; ".git"
 * folders passed over). A symbolic link, a budget passed or a read error
 * fails the whole read: -1 with why. */
int fileset_from_dir(const char *dir, struct fileset *fs, struct buf *why);

/* Write fs below dir (created with its parents if needed), never through a
 * symbolic link inside dir, replacing a file of the same name: one line per
 * file to report ("exported x" or "failed x: why"). -1 when a file failed. */
int fileset_to_dir(const struct fileset *fs, const char *dir, FILE *report);

/* The libarchive this binary runs with ("3.6.2"). */
const char *fileset_archive_version(void);

#endif
