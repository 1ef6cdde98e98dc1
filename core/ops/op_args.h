/* Checks and wording shared by the ops' shape rules: normalising an axis
 * against a rank, and describing types and integer lists in error messages.
 * Internal. Owns no op; every op file may use it. */
#ifndef TP_CORE_OPS_OP_ARGS_H
#define TP_CORE_OPS_OP_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "tensorplay/graph.h"

/* Room for a type ("f32[2, 3]") or list ("[2, -1]") in an error message. */
#define TP_DESCRIBE_MAX 192

/* Normalises `axis` against `rank` (Python style: -rank .. rank-1 are valid,
 * negative counts from the end). `what` names the attribute ("axis", "dim0").
 * On error: TP_ERR_INVALID_ARGUMENT "OP: WHAT 3 is out of range for f32[2, 3]
 * (expected -2..1)"; `type` is the value described (its rank may differ from
 * `rank`, as for unsqueeze, which accepts rank = ndim + 1). */
tp_status tp_axis_normalize(const char *op_name, const char *what, int64_t axis, int rank,
                            const tp_type *type, int *axis_out);

/* "f32[2, ?]" (symbols print as "?": shape rules see no graph). */
char *tp_type_text(const tp_type *type, char buf[TP_DESCRIBE_MAX]);
/* "[2, -1]". */
char *tp_ints_text(const int64_t *values, int count, char buf[TP_DESCRIBE_MAX]);

/* Product of `count` sizes (all >= 0); false on int64 overflow. */
bool tp_sizes_product(const int64_t *sizes, int count, int64_t *product_out);

#endif
