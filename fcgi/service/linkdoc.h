/* linkdoc (service): typed links in the file view's front matter, as read
 * (docs/conflicts.md "Links in front matter"). A document shows its entry's
 * OUTGOING links as lists of category-qualified paths under the keys
 * supersedes, contradicts, refines and related (service/linkmatter.h applies
 * the keys of a written document). */
#ifndef KNOWHUB_SVC_LINKDOC_H
#define KNOWHUB_SVC_LINKDOC_H

#include <json-c/json.h>

#include "base/buf.h"

struct store;
struct knowledge;

/* The front matter keys of the link types, in the order a document shows them. */
extern const char *const linkdoc_keys[];
#define LINKDOC_KEYS 4

/* 1 when the front matter meta (an object, may be NULL) holds a link key. */
int linkdoc_present(struct json_object *meta);

/* The outgoing links of entry id, at most 1000: a new array (the
 * caller's, also on failure) of {type, id, qualified ("category/path"),
 * status} of the other entry as it is now. A store status. */
int linkdoc_outgoing(struct store *st, const char *space, const char *id, struct json_object **out);

/* k's document (k->document, k->id and k->meta loaded) as the file view
 * shows it, appended to out: when k has outgoing links or its stored front
 * matter names a link key, the front matter with those keys set to the
 * current outgoing links (after the other keys; a type without links has
 * no key); else the stored document byte for byte. A document whose front
 * matter cannot be read, or a failed read of the links, is given as stored. */
void linkdoc_document(struct store *st, const char *space, const struct knowledge *k,
                      struct buf *out);

/* k's document as every reader of files sees it (the file view's read, the
 * exports): its time in the front matter (service/timing.h), then its
 * outgoing links (linkdoc_document), appended to out. A store status (the
 * time's read; out is then empty). */
int linkdoc_shown(struct store *st, const char *space, const struct knowledge *k, struct buf *out);

/* Call each with every entry k retired by a supersedes link (still merged
 * into k) whose path no active entry holds: an export writes them after k,
 * so that an import brings them back and k's supersedes retires them
 * again. A store status, or the first nonzero answer of each (which
 * stops it). */
int linkdoc_superseded(struct store *st, const char *space, const struct knowledge *k,
                       int (*each)(const struct knowledge *, void *), void *ctx);

#endif
