/* The template backend: what its files share. It is a small but real
 * TensorPlay backend for contract revision 2 that interprets the ops it
 * claims with plain loops: add, sub, mul, relu, exp (with NumPy
 * broadcasting) and 2-D matmul, on f32 and f64 values. Every other node is
 * refused in `supports` with a reason, and the core runs it on the fallback
 * backend: a partial backend still runs every graph.
 *
 *   template_backend.c  the backend table, entry symbol, probe/init/shutdown
 *                       (the per-instance context), compile options
 *   template_ops.c      the op table indexed by op id (what is claimed, and
 *                       why the rest is not) and the `supports` call
 *   template_compile.c  graph view -> plan: concrete shapes, scratch buffers
 *   template_run.c      the loops; conversion at the boundary
 *
 * Only <tensorplay/plugin.h> and <tensorplay/plugin_ops.h> are included from
 * TensorPlay; nothing is linked from it (the core hands us its services in
 * the host table). */
#ifndef TEMPLATE_BACKEND_H
#define TEMPLATE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tensorplay/plugin.h>
#include <tensorplay/plugin_ops.h>

#define TEMPLATE_NAME    "template"
#define TEMPLATE_VERSION "2.0.0"

/* What the loops do with a node: one entry per op of the op table
 * (template_ops.c), TEMPLATE_REFUSED for the ops left to the fallback. */
typedef enum template_loop {
    TEMPLATE_REFUSED = 0,
    TEMPLATE_UNARY,  /* relu, exp */
    TEMPLATE_BINARY, /* add, sub, mul, with broadcasting */
    TEMPLATE_MATMUL, /* [m, k] x [k, n] */
} template_loop;

/* Compile options (see template_backend.c). */
typedef struct template_options {
    bool parallel; /* use host->parallel_for for large loops */
    int64_t grain; /* minimum elements per parallel chunk */
} template_options;

/* The per-instance context init makes; every later call receives it. */
typedef struct template_context {
    const tp_plugin_host *host;
} template_context;

typedef struct template_shape {
    int32_t ndim;
    int64_t dims[TP_PLUGIN_MAX_DIMS];
} template_shape;

/* One value of the graph, as the executable stores it: every value is held
 * as doubles in a scratch buffer allocated at compile (an executable is never
 * run by two threads at once, so it may own its scratch). */
typedef struct template_value {
    int32_t dtype; /* TP_PLUGIN_F32 or TP_PLUGIN_F64 */
    template_shape shape;
    int64_t numel;
    double *data; /* numel doubles, from host->aligned_alloc */
} template_value;

/* One node to execute. */
typedef struct template_step {
    int32_t op_id; /* TP_PLUGIN_OP_* */
    template_loop loop;
    int32_t result; /* index into values */
    int32_t operands[2];
    bool broken; /* TEMPLATE_BREAK_OP: deliberately wrong (conformance demo) */
} template_step;

struct tp_plugin_executable {
    const tp_plugin_host *host;
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

/* Reports `format` through host->set_error (the one error channel of
 * revision 2) and returns `code`. */
int32_t template_fail(const tp_plugin_host *host, int32_t code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* template_backend.c: parses key=value options into *out; false after
 * host->set_error naming the option. */
bool template_parse_options(const tp_plugin_host *host, const tp_plugin_option *options,
                            int32_t count, template_options *out);

/* template_ops.c */
const char *template_op_name(int32_t op_id);
/* How node `value` of `graph` is computed, or TEMPLATE_REFUSED with the
 * reason written into `why`. */
template_loop template_classify(const tp_plugin_graph *graph, int32_t value, char *why,
                                size_t why_size);
int32_t template_supports(void *context, const tp_plugin_graph *graph, int32_t value);

/* template_compile.c */
int32_t template_compile(void *context, const tp_plugin_graph *graph,
                         const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                         const tp_plugin_option *options, int32_t num_options,
                         tp_plugin_executable **executable);
void template_release(void *context, tp_plugin_executable *executable);

/* template_run.c */
int32_t template_run(void *context, tp_plugin_executable *executable,
                     const tp_plugin_buffer *inputs, int32_t num_inputs, tp_plugin_buffer *outputs,
                     int32_t num_outputs);

#endif
