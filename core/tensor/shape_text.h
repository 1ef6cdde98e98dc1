/* Shapes as text for messages ("[2, 3]"), and the one shape check every
 * tensor constructor and file reader uses. Internal to libtensorplay. */
#ifndef TP_CORE_TENSOR_SHAPE_TEXT_H
#define TP_CORE_TENSOR_SHAPE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "tensorplay/tensor.h"

/* Writes "[2, 3]" ("[]" for ndim 0) into buf, always NUL-terminated when
 * size > 0; returns buf. Truncates with "..." when buf is too small. */
char *tp_shape_format(char *buf, size_t size, int ndim, const int64_t *shape);

/* Checks ndim in [0, TP_MAX_DIMS], every dimension >= 0, and that the
 * storage size fits (the product of the non-zero dimensions times the element
 * size must not overflow). On success stores numel and nbytes; on failure
 * sets an error that names the dtype and the shape. */
tp_status tp_shape_check(tp_dtype dtype, int ndim, const int64_t *shape, int64_t *numel,
                         size_t *nbytes);

#endif
