/* tp-backends: what backends are there, why not, and does a plugin honour
 * the contract. One file per subcommand; this header is what they share.
 * Built only on the public API (include/tensorplay). */
#ifndef TP_TOOLS_TP_BACKENDS_H
#define TP_TOOLS_TP_BACKENDS_H

#include <stdio.h>

#include "tensorplay/backend.h"

/* Exit codes. */
#define EXIT_OK     0
#define EXIT_FAILED 1
#define EXIT_USAGE  2

int command_list(int argc, char **argv);
int command_info(int argc, char **argv);
int command_paths(int argc, char **argv);
int command_check(int argc, char **argv);

/* Writes `text` as a JSON string literal. */
void json_string(FILE *out, const char *text);
/* "INI path:line" or "built-in" or "registered". */
const char *source_text(const tp_backend_info *info, char *buf, size_t size);
/* Prints the scan's file problems (if any) to `out`, one per line, indented. */
void print_problems(FILE *out);

#endif
