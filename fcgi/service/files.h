/* files (service): the operations of the file view — rules and experiences
 * as Markdown documents addressed by (category, path): limits, list, read,
 * write, rename, delete, the trash of deleted documents and the preview.
 * Each takes the caller's svc_ctx and the request's JSON body, checks it
 * (paths, categories, front matter, limits, versions; rules are changed by
 * admins only) and gives back the answer's data in *data (caller puts it;
 * delete's is NULL) and 0, or sets err and returns -1. */
#ifndef KNOWHUB_SVC_FILES_H
#define KNOWHUB_SVC_FILES_H

#include <json-c/json.h>

struct svc_ctx;
struct error;

/* The body limits: {limits: {rule_description_max, rules, experiences}}. */
int svc_files_limits(const struct svc_ctx *c, struct json_object **data, struct error *err);
/* Every active document of body's category: {items}. */
int svc_files_list(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                   struct error *err);
/* The document at body's {category, path}: content, fields, html, version ... */
int svc_files_read(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                   struct error *err);
/* Write body's content at {category, path} (created or updated, guarded by
 * expected_version or expected_updated): {category, path, id, version,
 * updated_at, updated_token, created}. */
int svc_files_write(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                    struct error *err);
/* Move {category, path} to {new_category, new_path}: {category, path, id}. */
int svc_files_rename(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                     struct error *err);
/* Move the entry live at from_category/from_path, at version, to
 * category/path as svc_files_rename does, with c->actor as the actor, in
 * the caller's transaction (the approval of a rename held for review): a
 * store status, or -1 with err (version_conflict, path_taken CONFLICT,
 * file_not_found, a limit of the new category). */
int svc_files_move(const struct svc_ctx *c, const char *from_category, const char *from_path,
                   long version, const char *category, const char *path, struct error *err);
/* Delete the document at {category, path}. */
int svc_files_delete(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                     struct error *err);
/* The deleted and merged documents (of body's category, or all): {items}. */
int svc_files_trash(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                    struct error *err);
/* The safe HTML of body's content, nothing stored: {html}. */
int svc_files_preview(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                      struct error *err);

#endif
