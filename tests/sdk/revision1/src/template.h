/* The template backend: what its three files share. It is a small but real
 * TensorPlay backend that interprets the graph view with its own loops:
 * every pointwise and reduction op of the op table plus the `constant` and
 * `full` creation ops, on f32, f64 and bool values (integer results are
 * allowed where an op gives them: argmax, sum of bools, casts to integers).
 * Anything else is refused at compile with an "unsupported:" error naming
 * the op and the dtype, which the conformance kit reports as unsupported.
 *
 *   template_backend.c  the backend table, entry symbol, probe/init/reset/
 *                       shutdown and compile options
 *   template_compile.c  graph view -> plan: op and dtype checks, concrete
 *                       shapes, attributes, scratch buffers
 *   template_run.c      the loops: pointwise with NumPy broadcasting,
 *                       reductions, creation; conversion at the boundary
 *
 * Only <tensorplay/plugin.h> is included from TensorPlay; nothing is linked
 * from it (the core hands us its services in the host table). */
#ifndef TEMPLATE_BACKEND_H
#define TEMPLATE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tensorplay/plugin.h>

#define TEMPLATE_NAME    "template"
#define TEMPLATE_VERSION "1.0.0"

/* What the loops know how to do. One entry per op of the op table we lower. */
typedef enum template_opcode {
    /* unary */
    TPL_NEG,
    TPL_ABS,
    TPL_EXP,
    TPL_LOG,
    TPL_SQRT,
    TPL_RSQRT,
    TPL_SIN,
    TPL_COS,
    TPL_TANH,
    TPL_SIGMOID,
    TPL_RELU,
    TPL_ERF,
    TPL_FLOOR,
    TPL_CEIL,
    TPL_SIGN,
    TPL_LOGICAL_NOT,
    TPL_CAST,
    /* binary */
    TPL_ADD,
    TPL_SUB,
    TPL_MUL,
    TPL_DIV,
    TPL_POW,
    TPL_MAXIMUM,
    TPL_MINIMUM,
    TPL_LT,
    TPL_LE,
    TPL_GT,
    TPL_GE,
    TPL_EQ,
    TPL_NE,
    TPL_LOGICAL_AND,
    TPL_LOGICAL_OR,
    /* ternary */
    TPL_WHERE,
    /* reductions */
    TPL_SUM,
    TPL_MEAN,
    TPL_MAX,
    TPL_MIN,
    TPL_ARGMAX,
    /* creation */
    TPL_CONSTANT,
    TPL_FULL,
} template_opcode;

typedef enum template_kind {
    TPL_KIND_POINTWISE,
    TPL_KIND_REDUCTION,
    TPL_KIND_CREATION
} template_kind;

typedef struct template_shape {
    int32_t ndim;
    int64_t dims[TP_PLUGIN_MAX_DIMS];
} template_shape;

/* One value of the graph, as the executable stores it: every value is held
 * as doubles in a scratch buffer allocated at compile (an executable is never
 * run by two threads at once, so it may own its scratch). */
typedef struct template_value {
    int32_t dtype; /* TP_PLUGIN_* of the value (the result type of its op) */
    template_shape shape;
    int64_t numel;
    double *data; /* numel doubles, from host->aligned_alloc */
} template_value;

/* One node to execute. */
typedef struct template_step {
    template_opcode code;
    const char *op_name; /* borrowed from the op table in template_compile.c */
    int32_t result;      /* index into values */
    int32_t num_operands;
    int32_t operands[3];
    /* reductions: which input axes are reduced, and whether they stay as 1 */
    bool reduced[TP_PLUGIN_MAX_DIMS];
    bool keepdim;
    int32_t axis;    /* argmax */
    double fill;     /* full */
    double *scratch; /* argmax: best value per output (host->aligned_alloc) */
    bool broken;     /* TEMPLATE_BREAK_OP: deliberately wrong (conformance demo) */
} template_step;

/* Compile options (see template_backend.c). */
typedef struct template_options {
    bool parallel; /* use host->parallel_for for large loops */
    int64_t grain; /* minimum elements per parallel chunk */
} template_options;

struct tp_plugin_executable {
    int32_t num_values;
    template_value *values;
    int32_t num_steps;
    template_step *steps;
    int32_t num_inputs;
    int32_t *inputs; /* value index of each graph input */
    int32_t num_outputs;
    int32_t *outputs; /* value index of each graph output */
    template_options options;
};

/* The host table given to init (NULL before init and after shutdown). */
extern const tp_plugin_host *template_host;

/* template_backend.c: parses key=value options into *out, or writes the
 * error (naming the option) into `error` and returns false. */
bool template_parse_options(const tp_plugin_option *options, int32_t count, template_options *out,
                            char *error, size_t error_size);

/* template_compile.c */
int32_t template_compile(const tp_plugin_graph *graph, const tp_plugin_tensor_meta *inputs,
                         int32_t num_inputs, const tp_plugin_option *options, int32_t num_options,
                         tp_plugin_executable **executable, char *error, size_t error_size);
void template_release(tp_plugin_executable *executable);

/* template_run.c */
int32_t template_run(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                     int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs);

/* Rounds `x` to what a value of `dtype` can hold (f32 rounding, bool 0/1,
 * integer truncation with saturation). */
double template_round_to(int32_t dtype, double x);

#endif
