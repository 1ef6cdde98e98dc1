/* TensorPlay — the IR: SSA graphs, the builder, the verifier, the .tpir text
 * form, and the reference interpreter.
 *
 * A graph has named inputs (placeholders), nodes (one op each, one result
 * each) and one ordered list of outputs (its `return`). Every value (an input
 * or a node's result) has a tp_type: a dtype and a shape whose dimensions are
 * sizes (>= 0) or, in dynamic graphs, symbols. A value is named by a
 * tp_value_id, its index in the graph; ids only grow.
 *
 * The .tpir text form (printed by tp_graph_print, read by tp_graph_parse):
 *
 *   graph mlp(%x: f32[64, 256], %w: f32[256, 512], %b: f32[512]) {
 *     %h: f32[64, 512] = matmul(%x, %w)
 *     %y: f32[64, 512] = add(%h, %b)
 *     %s: f32[64] = sum(%y) {axes=[1], keepdim=false}
 *     return %y, %s
 *   }
 *
 * Lines starting with '#' are comments. A dimension that is an identifier
 * (f32[n, 256]) is a symbol. Attributes are printed in the order of
 * tp_attr_key; only the ones the op declares, all of them. Printing a parsed
 * canonical file gives back the same bytes. Parse and verify errors read
 * "FILE:LINE:COL: what was expected, what was found".
 *
 * Ownership: tp_graph_* constructors return a graph the caller destroys with
 * tp_graph_destroy. Strings returned as char ** are released with tp_free.
 */
#ifndef TENSORPLAY_GRAPH_H
#define TENSORPLAY_GRAPH_H

#include <stdint.h>
#include <stdio.h>

#include "attrs.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A dimension < 0 is symbol number (-dim - 1) of the graph's symbol table. */
#define TP_DIM_SYMBOL(index)     (-(int64_t)(index)-1)
#define TP_DIM_IS_SYMBOL(dim)    ((dim) < 0)
#define TP_DIM_SYMBOL_INDEX(dim) ((int)(-(dim)-1))

typedef struct tp_type {
    tp_dtype dtype;
    int32_t ndim;
    int64_t dims[TP_MAX_DIMS];
} tp_type;

typedef int32_t tp_value_id;
#define TP_NO_VALUE ((tp_value_id)-1)

typedef struct tp_graph tp_graph;

/* ---- building ---------------------------------------------------------- */

/* New empty graph; `name` is an identifier (NULL gives "main"). */
TP_API tp_status tp_graph_create(const char *name, tp_graph **out);
TP_API void tp_graph_destroy(tp_graph *graph);
/* Deep copy. */
TP_API tp_status tp_graph_clone(const tp_graph *graph, tp_graph **out);

/* Interns a dimension symbol by name and returns its dim encoding. */
TP_API tp_status tp_graph_symbol(tp_graph *graph, const char *name, int64_t *dim_out);
TP_API const char *tp_graph_symbol_name(const tp_graph *graph, int64_t dim);

/* Adds an input. `name` must be a fresh identifier. */
TP_API tp_status tp_graph_add_input(tp_graph *graph, const char *name, const tp_type *type,
                                    tp_value_id *out);
/* Adds a node of op `op_name` on `inputs`; its result type comes from the op
 * table's shape/dtype rule. `attrs` may be NULL for ops without attributes.
 * `name` may be NULL (an automatic "%N" name is used). Errors name the op and
 * the input types. */
TP_API tp_status tp_graph_add_node(tp_graph *graph, const char *op_name, const tp_value_id *inputs,
                                   int num_inputs, const tp_attrs *attrs, const char *name,
                                   tp_value_id *out);
/* Sets the returned values (replaces any previous list). */
TP_API tp_status tp_graph_set_outputs(tp_graph *graph, const tp_value_id *values, int count);

/* ---- reading ----------------------------------------------------------- */

TP_API const char *tp_graph_name(const tp_graph *graph);
TP_API int tp_graph_num_inputs(const tp_graph *graph);
TP_API tp_value_id tp_graph_input(const tp_graph *graph, int index);
TP_API int tp_graph_num_outputs(const tp_graph *graph);
TP_API tp_value_id tp_graph_output(const tp_graph *graph, int index);
/* Number of values (inputs + nodes); ids are 0 .. count-1. */
TP_API int tp_graph_num_values(const tp_graph *graph);
TP_API const tp_type *tp_graph_value_type(const tp_graph *graph, tp_value_id value);
TP_API const char *tp_graph_value_name(const tp_graph *graph, tp_value_id value);
/* Op name of the node producing `value`; NULL for an input. */
TP_API const char *tp_graph_value_op(const tp_graph *graph, tp_value_id value);
TP_API int tp_graph_value_num_operands(const tp_graph *graph, tp_value_id value);
TP_API tp_value_id tp_graph_value_operand(const tp_graph *graph, tp_value_id value, int index);
TP_API const tp_attrs *tp_graph_value_attrs(const tp_graph *graph, tp_value_id value);

/* ---- checking and text ---------------------------------------------------- */

/* Checks SSA order, arity, attributes, and re-derives every type. */
TP_API tp_status tp_graph_verify(const tp_graph *graph);
/* Canonical .tpir text; release with tp_free. */
TP_API tp_status tp_graph_print(const tp_graph *graph, char **text_out);
/* Parses .tpir text; `filename` is used in error messages (NULL: "<text>").
 * The result is verified. */
TP_API tp_status tp_graph_parse(const char *text, size_t length, const char *filename,
                                tp_graph **out);
TP_API tp_status tp_graph_load(const char *path, tp_graph **out);
TP_API tp_status tp_graph_save(const tp_graph *graph, const char *path);

/* Writes a tp_type as "f32[2, n]" (graph may be NULL: symbols print as "?"). */
TP_API char *tp_type_describe(const tp_graph *graph, const tp_type *type, char *buf, size_t size);

/* ---- running -------------------------------------------------------------- */

/* Checks tensors against the graph's input types: count, dtype, rank, sizes
 * (symbols bind to the first size seen and must agree afterwards). Errors
 * name the input and the dimension. tp_graph_run does this first. */
TP_API tp_status tp_graph_check_inputs(const tp_graph *graph, tp_tensor *const *inputs,
                                       int num_inputs);

/* Runs the graph with the reference kernels. `inputs` has one tensor per graph
 * input, matching dtype and rank (and shape, where the graph's dims are
 * sizes; symbols bind to the first size seen and must agree afterwards).
 * `outputs` receives tp_graph_num_outputs new references. */
TP_API tp_status tp_graph_run(const tp_graph *graph, tp_tensor *const *inputs, int num_inputs,
                              tp_tensor **outputs);

#ifdef __cplusplus
}
#endif
#endif
