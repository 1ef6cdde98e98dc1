/* TensorPlay — op attributes.
 *
 * Every op's non-tensor parameters live in one plain struct, tp_attrs. Which
 * fields an op reads is declared in the op table as a mask of tp_attr_key
 * bits; the .tpir printer and parser, the verifier and the plugin graph view
 * all use that mask, so an op's attributes are defined once. Each op's
 * attributes, with their .tpir names and defaults: tensorplay-ops(7).
 *
 * Initialise with TP_ATTRS_INIT (all fields zero / defaults), set the fields
 * an op needs. `data` (constant payload) is a borrowed reference in calls and
 * an owned one inside a graph.
 */
#ifndef TENSORPLAY_ATTRS_H
#define TENSORPLAY_ATTRS_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tp_attr_key {
    TP_ATTR_AXES = 0,    /* ints: reduce / squeeze axes (empty = all / all size-1) */
    TP_ATTR_KEEPDIM,     /* bool: reductions keep reduced axes as size 1 */
    TP_ATTR_SHAPE,       /* ints: reshape (one -1 allowed), expand (-1 keeps), full */
    TP_ATTR_PERM,        /* ints: permute */
    TP_ATTR_AXIS,        /* int: argmax, slice, concat, unsqueeze, softmax,
                            log_softmax, layer_norm (first normalised axis) */
    TP_ATTR_DIM0,        /* int: transpose */
    TP_ATTR_DIM1,        /* int: transpose */
    TP_ATTR_START,       /* int: slice start (Python semantics, negative ok) */
    TP_ATTR_STOP,        /* int: slice stop (TP_SLICE_END = to the end) */
    TP_ATTR_STEP,        /* int: slice step (> 0) */
    TP_ATTR_RANGE_START, /* double: arange start   (printed "start") */
    TP_ATTR_RANGE_STOP,  /* double: arange stop    (printed "stop") */
    TP_ATTR_RANGE_STEP,  /* double: arange step    (printed "step") */
    TP_ATTR_DTYPE,       /* dtype: cast, full, arange, constant */
    TP_ATTR_VALUE,       /* double: full */
    TP_ATTR_EPS,         /* double: layer_norm (default 1e-5) */
    TP_ATTR_APPROXIMATE, /* enum tp_gelu_approximate: gelu */
    TP_ATTR_BETA,        /* double: softplus (default 1) */
    TP_ATTR_THRESHOLD,   /* double: softplus (default 20) */
    TP_ATTR_DATA,        /* tensor: constant payload */
    /* the sliding-window ops (conv, conv_transpose, max_pool, avg_pool);
       lists have one entry per spatial axis, empty = the default */
    TP_ATTR_KERNEL_SHAPE,      /* ints: pools' window size (required) */
    TP_ATTR_STRIDES,           /* ints: step of the window (default 1) */
    TP_ATTR_PADS,              /* ints: begin of each axis, then end (default 0) */
    TP_ATTR_DILATIONS,         /* ints: spacing of window taps (default 1) */
    TP_ATTR_GROUP,             /* int: conv, conv_transpose channel groups (default 1) */
    TP_ATTR_OUTPUT_PADDING,    /* ints: conv_transpose extra end rows/cols (default 0) */
    TP_ATTR_CEIL_MODE,         /* bool: pools round the output size up */
    TP_ATTR_COUNT_INCLUDE_PAD, /* bool: avg_pool divides by the padded window size */
    TP_ATTR_KEY_COUNT
} tp_attr_key;

#define TP_ATTR_BIT(key) (1u << (key))
#define TP_SLICE_END     INT64_MAX

typedef enum tp_gelu_approximate {
    TP_GELU_NONE = 0, /* x * 0.5 * (1 + erf(x / sqrt 2)) */
    TP_GELU_TANH = 1, /* x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) */
} tp_gelu_approximate;

typedef struct tp_attrs {
    int32_t naxes;
    int64_t axes[TP_MAX_DIMS];
    bool keepdim;
    int32_t shape_ndim;
    int64_t shape[TP_MAX_DIMS];
    int32_t nperm;
    int64_t perm[TP_MAX_DIMS];
    int64_t axis;
    int64_t dim0, dim1;
    int64_t start, stop, step;
    double range_start, range_stop, range_step;
    tp_dtype dtype;
    double value;
    double eps;
    tp_gelu_approximate approximate;
    double beta, threshold;
    tp_tensor *data;
    int32_t nkernel_shape, nstrides, npads, ndilations, noutput_padding;
    int64_t kernel_shape[TP_MAX_DIMS], strides[TP_MAX_DIMS], pads[TP_MAX_DIMS];
    int64_t dilations[TP_MAX_DIMS], output_padding[TP_MAX_DIMS];
    int64_t group;
    bool ceil_mode, count_include_pad;
} tp_attrs;

#define TP_ATTRS_INIT                                                                              \
    {                                                                                              \
        .stop = TP_SLICE_END, .step = 1, .range_step = 1.0, .eps = 1e-5, .beta = 1.0,              \
        .threshold = 20.0, .group = 1                                                              \
    }

/* Name of an attribute key as written in .tpir ("axes", "keepdim", ...). */
TP_API const char *tp_attr_key_name(tp_attr_key key);

#ifdef __cplusplus
}
#endif
#endif
