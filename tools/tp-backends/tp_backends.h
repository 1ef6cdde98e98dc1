/* tp-backends: what backends are there, why not, and does a plugin honour
 * the contract. One file per subcommand; this header is what they share.
 * Built only on the public API (include/tensorplay). */
#ifndef TP_TOOLS_TP_BACKENDS_H
#define TP_TOOLS_TP_BACKENDS_H

#include <stdbool.h>
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
/* Which backend `auto` picks now (into `pick`) and why (into `why`),
 * resolved in a forked child so this process loads nothing; `infos` (the
 * listed backends) add the unavailable ones ranked above the pick. False
 * when nothing can be picked (`pick` is "", `why` says why). */
bool auto_pick_explain(const tp_backend_info *infos, int count, char *pick, size_t pick_size,
                       char *why, size_t why_size);
/* Prints the scan's file problems (if any) to `out`, one per line, indented. */
void print_problems(FILE *out);

#endif
