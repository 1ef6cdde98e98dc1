/* Recompile reasons: a growable list of owned strings and the one-line
 * summary ("r1; r2; r3; r4 (+K more)") used in logs and errors. Internal. */
#ifndef TP_CORE_COMPILE_REASONS_H
#define TP_CORE_COMPILE_REASONS_H

#include <stddef.h>

#include "tensorplay/status.h"

#define TP_REASONS_SHOWN 4

typedef struct tp_reason_list {
    char **items;
    int count, capacity;
} tp_reason_list;

/* Appends a formatted reason; out of memory drops it (reasons are advisory). */
void tp_reasons_add(tp_reason_list *list, const char *format, ...) TP_PRINTF(2, 3);
void tp_reasons_clear(tp_reason_list *list);
/* Moves `from` into `to` (clearing `to` first); `from` ends empty. */
void tp_reasons_move(tp_reason_list *to, tp_reason_list *from);
/* The first TP_REASONS_SHOWN reasons joined by "; ", then " (+K more)" when
 * there are more. Always NUL-terminated; truncated to `size`. */
char *tp_reasons_summary(const tp_reason_list *list, char *buf, size_t size);
/* One block holding an array of count strings and the strings (tp_free). */
tp_status tp_reasons_copy_out(const tp_reason_list *list, char ***out, int *count_out);

#endif
