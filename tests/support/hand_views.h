/* Graph views built by hand for the plugin suites (opencl, cuda), so a
 * test can give a plugin what no core would produce: an op id newer than
 * the plugin, a view without nodes, input metadata that contradicts the
 * declared types. Header-only; each suite includes it where it needs it. */
#ifndef TP_TESTS_HAND_VIEWS_H
#define TP_TESTS_HAND_VIEWS_H

#include <string.h>

#include "tensorplay/plugin.h"
#include "tensorplay/plugin_ops.h"

/* %x: f32[4], one node %y = op(%x) with the given op id, kind and dtypes. */
typedef struct hand_unary_view {
    tp_plugin_value values[2];
    tp_plugin_node nodes[2];
    int32_t operands[1], inputs[1], outputs[1];
    tp_plugin_graph graph;
} hand_unary_view;

static inline void hand_unary_view_build(hand_unary_view *g, const char *op, int32_t op_id,
                                         int32_t kind, int32_t dtype, int32_t compute) {
    memset(g, 0, sizeof *g);
    tp_plugin_type f32_4 = {.dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {4}};
    g->values[0] = (tp_plugin_value){.name = "x", .type = f32_4, .fusion_region = -1};
    g->values[1] = (tp_plugin_value){.name = "y",
                                     .op = op,
                                     .type = f32_4,
                                     .num_operands = 1,
                                     .operands = g->operands,
                                     .fusion_region = -1};
    g->values[1].type.dtype = dtype;
    g->nodes[0] = (tp_plugin_node){-1, -1, TP_PLUGIN_F32, TP_PLUGIN_F32};
    g->nodes[1] = (tp_plugin_node){op_id, kind, compute, dtype};
    g->outputs[0] = 1;
    g->graph = (tp_plugin_graph){.struct_size = sizeof(tp_plugin_graph),
                                 .name = "hand_unary",
                                 .num_values = 2,
                                 .values = g->values,
                                 .num_inputs = 1,
                                 .inputs = g->inputs,
                                 .num_outputs = 1,
                                 .outputs = g->outputs,
                                 .nodes = g->nodes};
}

/* graph binder(%x: f32[N], %y: f32[N]) { %z: f32[N] = add(%x, %y) }: the
 * symbol binder's case (both inputs name symbol N). */
typedef struct hand_symbol_view {
    tp_plugin_value values[3];
    tp_plugin_node nodes[3];
    int32_t operands[2], inputs[2], outputs[1];
    const char *symbols[1];
    tp_plugin_graph graph;
} hand_symbol_view;

static inline void hand_symbol_view_build(hand_symbol_view *g) {
    memset(g, 0, sizeof *g);
    tp_plugin_type f32_n = {.dtype = TP_PLUGIN_F32, .ndim = 1, .dims = {-1}};
    g->values[0] = (tp_plugin_value){.name = "x", .type = f32_n, .fusion_region = -1};
    g->values[1] = (tp_plugin_value){.name = "y", .type = f32_n, .fusion_region = -1};
    g->operands[0] = 0;
    g->operands[1] = 1;
    g->values[2] = (tp_plugin_value){.name = "z",
                                     .op = "add",
                                     .type = f32_n,
                                     .num_operands = 2,
                                     .operands = g->operands,
                                     .fusion_region = -1};
    g->nodes[0] = (tp_plugin_node){-1, -1, TP_PLUGIN_F32, TP_PLUGIN_F32};
    g->nodes[1] = g->nodes[0];
    g->nodes[2] =
        (tp_plugin_node){TP_PLUGIN_OP_ADD, TP_PLUGIN_KIND_POINTWISE, TP_PLUGIN_F32, TP_PLUGIN_F32};
    g->inputs[0] = 0;
    g->inputs[1] = 1;
    g->outputs[0] = 2;
    g->symbols[0] = "N";
    g->graph = (tp_plugin_graph){.struct_size = sizeof(tp_plugin_graph),
                                 .name = "binder",
                                 .num_values = 3,
                                 .values = g->values,
                                 .num_inputs = 2,
                                 .inputs = g->inputs,
                                 .num_outputs = 1,
                                 .outputs = g->outputs,
                                 .num_symbols = 1,
                                 .symbols = g->symbols,
                                 .nodes = g->nodes};
}

/* Metadata of one input: `dtype` with `ndim` dims all equal to `size`. */
static inline tp_plugin_tensor_meta hand_meta(int32_t dtype, int32_t ndim, int64_t size) {
    tp_plugin_tensor_meta meta = {.dtype = dtype, .ndim = ndim};
    for (int32_t d = 0; d < ndim; d++) meta.dims[d] = size;
    return meta;
}

#endif
