/* transfer: import and export of the knowledge directory layout
 * (rules/NAME.md, experiences/NAME.md, experiences/FOLDER/NAME.md) for one space,
 * used by `knowhub import` and `knowhub export`. Every file is reported. */
#ifndef KNOWHUB_TRANSFER_H
#define KNOWHUB_TRANSFER_H

#include <stdio.h>

struct store;

enum on_conflict { ON_CONFLICT_SKIP, ON_CONFLICT_OVERWRITE, ON_CONFLICT_RENAME };

struct transfer_counts {
    long imported, updated, unchanged, skipped, refused, exported;
};

/* Import every file under dir into space (created if needed), writing one
 * line per file to report ("imported rules/a.md", "refused x: why", ...).
 * Returns 0, or -1 when dir cannot be read or the database fails. */
int transfer_import(struct store *st, const char *space, const char *dir,
                    enum on_conflict on_conflict, FILE *report, struct transfer_counts *counts);

/* Write every active document of space under dir, byte for byte as stored. */
int transfer_export(struct store *st, const char *space, const char *dir, FILE *report,
                    struct transfer_counts *counts);

#endif
