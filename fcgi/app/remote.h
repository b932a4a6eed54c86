/* remote: the content commands (search, get, add, list, delete, traces,
 * sessions), each one or two calls of the REST API through nginx, local or
 * remote (app/client.h says where and with which token). Output: a table or
 * text for people, or with --json the answer's data, pretty, for scripts.
 * Exit statuses: enum client_exit (docs/cli.md). */
#ifndef KNOWHUB_REMOTE_H
#define KNOWHUB_REMOTE_H

#include <stdio.h>

#include "base/config.h"

/* 1 when name is a content command. */
int remote_is_command(const char *name);

/* Run a content command: argv[0] is its name, the rest its arguments.
 * Returns the process's exit status. */
int remote_main(const struct config *cfg, int argc, char **argv);

/* Print the content commands' part of knowhub's usage to out. */
void remote_usage(FILE *out);

#endif
