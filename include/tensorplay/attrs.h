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

#include <math.h>
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
    /* pad, clip, topk, cumsum, resize */
    TP_ATTR_PAD_BEFORE,  /* ints: pad, elements added before each axis (printed "before") */
    TP_ATTR_PAD_AFTER,   /* ints: pad, elements added after each axis (printed "after") */
    TP_ATTR_MODE,        /* enum tp_mode: pad (constant reflect edge), resize (nearest linear) */
    TP_ATTR_MIN,         /* double: clip lower bound (default -inf: none) */
    TP_ATTR_MAX,         /* double: clip upper bound (default +inf: none) */
    TP_ATTR_K,           /* int: topk, how many elements along `axis` */
    TP_ATTR_LARGEST,     /* bool: topk, the largest (true, default) or the smallest */
    TP_ATTR_EXCLUSIVE,   /* bool: cumsum leaves the element itself out */
    TP_ATTR_REVERSE,     /* bool: cumsum from the end of the axis */
    TP_ATTR_COORDINATES, /* enum tp_coordinates: resize, output -> input coordinates */
    TP_ATTR_ROUNDING,    /* enum tp_rounding: resize nearest, how a coordinate rounds */
    TP_ATTR_SCALE_H,     /* double: resize scale of axis -2 (0: output / input size) */
    TP_ATTR_SCALE_W,     /* double: resize scale of axis -1 (0: output / input size) */
    TP_ATTR_KEY_COUNT
} tp_attr_key;

#define TP_ATTR_BIT(key) ((uint64_t)1 << (key))
#define TP_SLICE_END     INT64_MAX

typedef enum tp_gelu_approximate {
    TP_GELU_NONE = 0, /* x * 0.5 * (1 + erf(x / sqrt 2)) */
    TP_GELU_TANH = 1, /* x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) */
} tp_gelu_approximate;

/* Values of TP_ATTR_MODE. */
typedef enum tp_mode {
    TP_MODE_CONSTANT = 0, /* pad with `value` */
    TP_MODE_REFLECT = 1,  /* pad mirroring without the edge element (NumPy "reflect") */
    TP_MODE_EDGE = 2,     /* pad repeating the edge element */
    TP_MODE_NEAREST = 3,  /* resize: the nearest input element */
    TP_MODE_LINEAR = 4,   /* resize: bilinear over the last two axes */
    TP_MODE_WRAP = 5,     /* pad with the elements of the other end (circular) */
} tp_mode;

/* Values of TP_ATTR_COORDINATES: the input coordinate x_in of output index
 * x_out along an axis of input size `in`, output size `out` and scale s
 * (the attribute's, or out / in when it is 0); L = in * s, the unrounded
 * output length. */
typedef enum tp_coordinates {
    TP_COORDINATES_HALF_PIXEL = 0,           /* (x_out + 0.5) / s - 0.5 */
    TP_COORDINATES_ASYMMETRIC = 1,           /* x_out / s */
    TP_COORDINATES_ALIGN_CORNERS = 2,        /* x_out * (in - 1) / (L - 1), 0 when L == 1 */
    TP_COORDINATES_PYTORCH_HALF_PIXEL = 3,   /* half_pixel, 0 when L <= 1 */
    TP_COORDINATES_HALF_PIXEL_SYMMETRIC = 4, /* half_pixel + in / 2 * (1 - out / L) */
    TP_COORDINATES_TF_HALF_PIXEL_FOR_NN = 5, /* (x_out + 0.5) / s */
} tp_coordinates;

/* Values of TP_ATTR_ROUNDING (resize nearest). */
typedef enum tp_rounding {
    TP_ROUNDING_ROUND_PREFER_FLOOR = 0, /* nearest integer, x.5 rounds down */
    TP_ROUNDING_ROUND_PREFER_CEIL = 1,  /* nearest integer, x.5 rounds up */
    TP_ROUNDING_FLOOR = 2,
    TP_ROUNDING_CEIL = 3,
} tp_rounding;

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
    int32_t npad_before;
    int64_t pad_before[TP_MAX_DIMS];
    int32_t npad_after;
    int64_t pad_after[TP_MAX_DIMS];
    tp_mode mode;
    double min, max;
    int64_t k;
    bool largest, exclusive, reverse;
    tp_coordinates coordinates;
    tp_rounding rounding;
    double scale_h, scale_w;
} tp_attrs;

#define TP_ATTRS_INIT                                                                              \
    {                                                                                              \
        .stop = TP_SLICE_END, .step = 1, .range_step = 1.0, .eps = 1e-5, .beta = 1.0,              \
        .threshold = 20.0, .group = 1, .min = -HUGE_VAL, .max = HUGE_VAL, .largest = true          \
    }

/* Name of an attribute key as written in .tpir ("axes", "keepdim", ...). */
TP_API const char *tp_attr_key_name(tp_attr_key key);

#ifdef __cplusplus
}
#endif
#endif
