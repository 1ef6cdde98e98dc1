/* The template's op knowledge: one entry per op of the op table, indexed by
 * op id (tp_plugin_graph.nodes[v].op_id, TP_PLUGIN_OP_* of
 * <tensorplay/plugin_ops.h>), and the `supports` call built on it.
 *
 * The table is written out, one line per op, so that a core with a new op
 * stops this file from compiling (the _Static_assert below) until someone
 * decides whether the template claims it. A node whose op id is newer than
 * this header (>= TP_PLUGIN_OP_COUNT) is refused: ids are stable, new ops
 * only get new ids at the end.
 *
 * Claims depend only on the node and its operands' types, never on other
 * nodes' claims. What is refused runs on the fallback backend; a composite
 * op (softmax, layer_norm, ...) is decomposed by the core into simpler ops,
 * some of which the template may claim. */
#include <stdio.h>

#include "template.h"

typedef struct template_op_rule {
    const char *name;
    template_loop loop;
    const char *refusal; /* why the template leaves the op to the fallback */
} template_op_rule;

#define CLAIM(name, loop)                                                                          \
    { name, loop, NULL }
#define REFUSE(name)                                                                               \
    { name, TEMPLATE_REFUSED, "the template implements add, sub, mul, relu, exp and matmul only" }
#define COMPOSITE(name)                                                                            \
    { name, TEMPLATE_REFUSED, "composite op: the core decomposes it into simpler ops" }

static const template_op_rule template_op_rules[] = {
    [TP_PLUGIN_OP_NEG] = REFUSE("neg"),
    [TP_PLUGIN_OP_ABS] = REFUSE("abs"),
    [TP_PLUGIN_OP_EXP] = CLAIM("exp", TEMPLATE_UNARY),
    [TP_PLUGIN_OP_LOG] = REFUSE("log"),
    [TP_PLUGIN_OP_SQRT] = REFUSE("sqrt"),
    [TP_PLUGIN_OP_RSQRT] = REFUSE("rsqrt"),
    [TP_PLUGIN_OP_SIN] = REFUSE("sin"),
    [TP_PLUGIN_OP_COS] = REFUSE("cos"),
    [TP_PLUGIN_OP_TANH] = REFUSE("tanh"),
    [TP_PLUGIN_OP_SIGMOID] = REFUSE("sigmoid"),
    [TP_PLUGIN_OP_RELU] = CLAIM("relu", TEMPLATE_UNARY),
    [TP_PLUGIN_OP_ERF] = REFUSE("erf"),
    [TP_PLUGIN_OP_FLOOR] = REFUSE("floor"),
    [TP_PLUGIN_OP_CEIL] = REFUSE("ceil"),
    [TP_PLUGIN_OP_SIGN] = REFUSE("sign"),
    [TP_PLUGIN_OP_LOGICAL_NOT] = REFUSE("logical_not"),
    [TP_PLUGIN_OP_CAST] = REFUSE("cast"),
    [TP_PLUGIN_OP_ADD] = CLAIM("add", TEMPLATE_BINARY),
    [TP_PLUGIN_OP_SUB] = CLAIM("sub", TEMPLATE_BINARY),
    [TP_PLUGIN_OP_MUL] = CLAIM("mul", TEMPLATE_BINARY),
    [TP_PLUGIN_OP_DIV] = REFUSE("div"),
    [TP_PLUGIN_OP_POW] = REFUSE("pow"),
    [TP_PLUGIN_OP_MAXIMUM] = REFUSE("maximum"),
    [TP_PLUGIN_OP_MINIMUM] = REFUSE("minimum"),
    [TP_PLUGIN_OP_LT] = REFUSE("lt"),
    [TP_PLUGIN_OP_LE] = REFUSE("le"),
    [TP_PLUGIN_OP_GT] = REFUSE("gt"),
    [TP_PLUGIN_OP_GE] = REFUSE("ge"),
    [TP_PLUGIN_OP_EQ] = REFUSE("eq"),
    [TP_PLUGIN_OP_NE] = REFUSE("ne"),
    [TP_PLUGIN_OP_LOGICAL_AND] = REFUSE("logical_and"),
    [TP_PLUGIN_OP_LOGICAL_OR] = REFUSE("logical_or"),
    [TP_PLUGIN_OP_WHERE] = REFUSE("where"),
    [TP_PLUGIN_OP_SUM] = REFUSE("sum"),
    [TP_PLUGIN_OP_MEAN] = REFUSE("mean"),
    [TP_PLUGIN_OP_MAX] = REFUSE("max"),
    [TP_PLUGIN_OP_MIN] = REFUSE("min"),
    [TP_PLUGIN_OP_ARGMAX] = REFUSE("argmax"),
    [TP_PLUGIN_OP_MATMUL] = CLAIM("matmul", TEMPLATE_MATMUL),
    [TP_PLUGIN_OP_RESHAPE] = REFUSE("reshape"),
    [TP_PLUGIN_OP_PERMUTE] = REFUSE("permute"),
    [TP_PLUGIN_OP_TRANSPOSE] = REFUSE("transpose"),
    [TP_PLUGIN_OP_EXPAND] = REFUSE("expand"),
    [TP_PLUGIN_OP_SLICE] = REFUSE("slice"),
    [TP_PLUGIN_OP_CONCAT] = REFUSE("concat"),
    [TP_PLUGIN_OP_SQUEEZE] = REFUSE("squeeze"),
    [TP_PLUGIN_OP_UNSQUEEZE] = REFUSE("unsqueeze"),
    [TP_PLUGIN_OP_CONSTANT] = REFUSE("constant"),
    [TP_PLUGIN_OP_FULL] = REFUSE("full"),
    [TP_PLUGIN_OP_ARANGE] = REFUSE("arange"),
    [TP_PLUGIN_OP_SOFTMAX] = COMPOSITE("softmax"),
    [TP_PLUGIN_OP_LOG_SOFTMAX] = COMPOSITE("log_softmax"),
    [TP_PLUGIN_OP_LAYER_NORM] = COMPOSITE("layer_norm"),
    [TP_PLUGIN_OP_GELU] = COMPOSITE("gelu"),
    [TP_PLUGIN_OP_SILU] = COMPOSITE("silu"),
    [TP_PLUGIN_OP_SOFTPLUS] = COMPOSITE("softplus"),
    [TP_PLUGIN_OP_LINEAR] = COMPOSITE("linear"),
    [TP_PLUGIN_OP_GATHER] = REFUSE("gather"),
    [TP_PLUGIN_OP_GATHER_ELEMENTS] = REFUSE("gather_elements"),
    [TP_PLUGIN_OP_CONV] = REFUSE("conv"),
    [TP_PLUGIN_OP_CONV_TRANSPOSE] = REFUSE("conv_transpose"),
    [TP_PLUGIN_OP_MAX_POOL] = REFUSE("max_pool"),
#ifndef TEMPLATE_TEST_DROP_LAST_OP /* tests/sdk: dropping an entry must fail the build */
    [TP_PLUGIN_OP_AVG_POOL] = REFUSE("avg_pool"),
#endif
};

_Static_assert(sizeof template_op_rules / sizeof template_op_rules[0] == TP_PLUGIN_OP_COUNT,
               "template_op_rules must have one entry per op of tensorplay/plugin_ops.h: "
               "add the new op (claimed or refused) in op id order");

const char *template_op_name(int32_t op_id) {
    if (op_id < 0 || op_id >= TP_PLUGIN_OP_COUNT || !template_op_rules[op_id].name) return "?";
    return template_op_rules[op_id].name;
}

static const char *dtype_name(int32_t dtype) {
    static const char *const names[] = {"f32", "f64", "i32", "i64", "bool"};
    return dtype >= 0 && dtype <= TP_PLUGIN_BOOL ? names[dtype] : "?";
}

/* Values the loops hold exactly enough: f32 and f64. (Integers above 2^53
 * would lose digits in the doubles the loops use.) */
static bool float_dtype(int32_t dtype) {
    return dtype == TP_PLUGIN_F32 || dtype == TP_PLUGIN_F64;
}

template_loop template_classify(const tp_plugin_graph *graph, int32_t index, char *why,
                                size_t why_size) {
    const tp_plugin_value *value = &graph->values[index];
    const tp_plugin_node *node = &graph->nodes[index];
    if (node->op_id < 0 || node->op_id >= TP_PLUGIN_OP_COUNT) {
        snprintf(why, why_size, "op '%s' (%%%s) is newer than this template build", value->op,
                 value->name);
        return TEMPLATE_REFUSED;
    }
    const template_op_rule *rule = &template_op_rules[node->op_id];
    if (rule->loop == TEMPLATE_REFUSED) {
        snprintf(why, why_size, "op '%s' (%%%s): %s", value->op, value->name,
                 rule->refusal ? rule->refusal : "not handled");
        return TEMPLATE_REFUSED;
    }
    for (int32_t k = 0; k < value->num_operands; k++) {
        int32_t dtype = graph->values[value->operands[k]].type.dtype;
        if (!float_dtype(dtype) || dtype != node->result_dtype) {
            snprintf(why, why_size,
                     "op '%s' (%%%s) on %s operands (the template computes f32 and f64 only)",
                     value->op, value->name, dtype_name(dtype));
            return TEMPLATE_REFUSED;
        }
    }
    if (rule->loop == TEMPLATE_MATMUL) {
        const tp_plugin_type *a = &graph->values[value->operands[0]].type;
        const tp_plugin_type *b = &graph->values[value->operands[1]].type;
        if (a->ndim != 2 || b->ndim != 2) {
            snprintf(why, why_size,
                     "op 'matmul' (%%%s) of rank-%d by rank-%d operands (the template multiplies "
                     "2-D matrices only)",
                     value->name, (int)a->ndim, (int)b->ndim);
            return TEMPLATE_REFUSED;
        }
    }
    return rule->loop;
}

int32_t template_supports(void *context, const tp_plugin_graph *graph, int32_t value) {
    const template_context *self = context;
    char why[256];
    if (template_classify(graph, value, why, sizeof why) != TEMPLATE_REFUSED) return TP_PLUGIN_OK;
    self->host->set_error(self->host, why);
    return TP_PLUGIN_UNSUPPORTED;
}
