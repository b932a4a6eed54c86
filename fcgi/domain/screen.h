/* screen: the poisoning screen, pure (no store, no I/O, no LLM). It finds
 * text that tries to steer the agent that will read it: instruction
 * overrides, fake chat turns and role tags, exfiltration, hidden text
 * (docs/review.md "The poisoning screen" lists the classes and codes).
 *
 * The text is folded first (full-width ASCII and mathematical letters to
 * ASCII, common Cyrillic/Greek look-alikes to Latin, ASCII lower case,
 * zero-width, bidi and tag characters dropped, runs of white space to one),
 * then every row of a table of patterns is run over the folded text; a
 * finding's offset and length point into the original text. The work is
 * linear in the input (hand-written scanners with bounded windows, no
 * backtracking) and the memory is about 6 bytes per input byte. */
#ifndef KNOWHUB_SCREEN_H
#define KNOWHUB_SCREEN_H

#include <stddef.h>

#include "base/buf.h"

/* The largest text screened: screen_text refuses a longer one (-1). */
#define SCREEN_MAX_INPUT (1024 * 1024)
/* The most findings kept in a result (one per rule at most). */
#define SCREEN_MAX_FINDINGS 24

/* The classes of findings; screen_class_name gives their stable names. */
enum screen_class {
    SCREEN_INSTRUCTION_OVERRIDE, /* "instruction_override" */
    SCREEN_ROLE_TAG,             /* "role_tag" */
    SCREEN_EXFILTRATION,         /* "exfiltration" */
    SCREEN_HIDDEN_TEXT,          /* "hidden_text" */
    SCREEN_CLASS_COUNT
};

/* One rule of the table: its class, its reason code (stable snake_case,
 * unique) and one line on what it catches. */
struct screen_rule {
    enum screen_class cls;
    const char *code;
    const char *description;
};

/* One finding: the rule that matched and where, in bytes of the original
 * text (the first match of that rule; length >= 1). */
struct screen_finding {
    enum screen_class cls;
    const char *code; /* static: the rule's code */
    size_t offset;
    size_t length;
};

/* The findings of one text, in the order of the rule table. */
struct screen_result {
    size_t count;
    struct screen_finding findings[SCREEN_MAX_FINDINGS];
};

/* Screen text[0..len) (UTF-8; invalid bytes are accepted and kept as they
 * are). Fills out (count 0 when the text is clean) and returns the number of
 * findings, or -1 when len > SCREEN_MAX_INPUT (out is then empty). */
int screen_text(const char *text, size_t len, struct screen_result *out);

/* The stable name of a class ("instruction_override" ...), or "unknown". */
const char *screen_class_name(enum screen_class cls);

/* The rule table: its number of rows, and row i (NULL past the end). */
size_t screen_rule_count(void);
const struct screen_rule *screen_rule_at(size_t i);

/* Append to out a short excerpt of text around finding f (at most about 80
 * bytes, cut on a UTF-8 boundary): line breaks become spaces, and every
 * control, zero-width, bidi or tag character is written as <U+XXXX>, so the
 * excerpt is safe to show and hides nothing. Returns buf_add's result. */
int screen_excerpt(const char *text, size_t len, const struct screen_finding *f, struct buf *out);

#endif
