/* A seeded generator of random graphs for the pipeline-preservation test and
 * the pass benchmark: chains of pointwise, reduction, shape, composite,
 * matmul and constant ops over small random shapes, with repeated nodes (for
 * cse), identity operands x*1 / x+0 (for normalize) and constant-only
 * subgraphs (for constfold). Built with the public graph API only; every
 * attempted node that the op rules reject is simply skipped. All f32. */
#ifndef TP_TESTS_PASSES_RANDOM_GRAPH_H
#define TP_TESTS_PASSES_RANDOM_GRAPH_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tensorplay/graph.h"

typedef struct random_source {
    uint64_t state;
} random_source;

static inline uint32_t random_next(random_source *r) {
    r->state ^= r->state << 13;
    r->state ^= r->state >> 7;
    r->state ^= r->state << 17;
    return (uint32_t)(r->state >> 11);
}

static inline int random_below(random_source *r, int n) {
    return (int)(random_next(r) % (uint32_t)n);
}

/* Uniform in [low, high). */
static inline double random_uniform(random_source *r, double low, double high) {
    return low + (high - low) * (random_next(r) / 4294967296.0);
}

typedef struct random_graph_builder {
    random_source *rng;
    tp_graph *graph;
    tp_value_id pool[512];
    int pool_size;
} random_graph_builder;

static inline void rg_push(random_graph_builder *b, tp_value_id v) {
    if (b->pool_size < 512) b->pool[b->pool_size++] = v;
}

static inline tp_value_id rg_pick(random_graph_builder *b) {
    /* Prefer recent values so chains grow long. */
    int n = b->pool_size;
    int back = random_below(b->rng, n < 4 ? n : 4);
    return random_below(b->rng, 3) ? b->pool[n - 1 - back] : b->pool[random_below(b->rng, n)];
}

static inline const tp_type *rg_type(random_graph_builder *b, tp_value_id v) {
    return tp_graph_value_type(b->graph, v);
}

/* Adds a node; returns TP_NO_VALUE when its rule rejects the operands. */
static inline tp_value_id rg_node(random_graph_builder *b, const char *op, const tp_value_id *ins,
                                  int n, const tp_attrs *attrs) {
    tp_value_id out = TP_NO_VALUE;
    if (tp_graph_add_node(b->graph, op, ins, n, attrs, NULL, &out) != TP_OK) return TP_NO_VALUE;
    return out;
}

static inline tp_value_id rg_full(random_graph_builder *b, double value) {
    tp_attrs a = TP_ATTRS_INIT;
    a.dtype = TP_F32;
    a.value = value;
    return rg_node(b, "full", NULL, 0, &a);
}

/* A constant of `ndim`/`dims` with elements in [low, high). */
static inline tp_value_id rg_constant(random_graph_builder *b, int ndim, const int64_t *dims,
                                      double low, double high) {
    int64_t count = 1;
    for (int i = 0; i < ndim; i++) count *= dims[i];
    float values[256];
    if (count > 256) return TP_NO_VALUE;
    for (int64_t i = 0; i < count; i++) values[i] = (float)random_uniform(b->rng, low, high);
    tp_tensor *data = NULL;
    if (tp_tensor_from_data(TP_F32, ndim, dims, values, &data) != TP_OK) return TP_NO_VALUE;
    tp_attrs a = TP_ATTRS_INIT;
    a.data = data;
    tp_value_id v = rg_node(b, "constant", NULL, 0, &a);
    tp_tensor_release(data);
    return v;
}

static inline tp_value_id rg_unary(random_graph_builder *b, tp_value_id x) {
    static const char *const ops[] = {"neg", "abs", "tanh", "sigmoid", "sin", "cos", "relu", "erf"};
    return rg_node(b, ops[random_below(b->rng, 8)], &x, 1, NULL);
}

/* exp, log and sqrt only on values kept in a safe range. */
static inline tp_value_id rg_guarded_unary(random_graph_builder *b, tp_value_id x) {
    tp_value_id t = rg_node(b, "tanh", &x, 1, NULL);
    if (t == TP_NO_VALUE) return t;
    switch (random_below(b->rng, 3)) {
    case 0:
        return rg_node(b, "exp", &t, 1, NULL);
    case 1: {
        tp_value_id two = rg_full(b, 2.0);
        tp_value_id ins[2] = {t, two};
        tp_value_id shifted = rg_node(b, "add", ins, 2, NULL);
        return rg_node(b, random_below(b->rng, 2) ? "log" : "sqrt", &shifted, 1, NULL);
    }
    default:
        return rg_node(b, "sigmoid", &t, 1, NULL);
    }
}

static inline tp_value_id rg_binary(random_graph_builder *b, tp_value_id x) {
    static const char *const ops[] = {"add", "sub", "mul", "maximum", "minimum"};
    const char *op = ops[random_below(b->rng, 5)];
    const tp_type *t = rg_type(b, x);
    tp_value_id y;
    switch (random_below(b->rng, 5)) {
    case 0:
        y = rg_full(b, random_below(b->rng, 2) ? 0.0 : 1.0);
        break; /* identities */
    case 1:
        y = t->ndim ? rg_constant(b, 1, &t->dims[t->ndim - 1], -1.5, 1.5)
                    : rg_constant(b, 0, NULL, -1.5, 1.5);
        break;
    default:
        y = rg_pick(b);
        break;
    }
    if (y == TP_NO_VALUE) return y;
    tp_value_id ins[2] = {x, y};
    if (random_below(b->rng, 2)) ins[0] = y, ins[1] = x;
    return rg_node(b, op, ins, 2, NULL);
}

static inline tp_value_id rg_reduction(random_graph_builder *b, tp_value_id x) {
    static const char *const ops[] = {"sum", "mean", "max", "min"};
    const tp_type *t = rg_type(b, x);
    if (t->ndim == 0) return TP_NO_VALUE;
    tp_attrs a = TP_ATTRS_INIT;
    a.naxes = 1;
    a.axes[0] = random_below(b->rng, t->ndim);
    a.keepdim = random_below(b->rng, 2);
    return rg_node(b, ops[random_below(b->rng, 4)], &x, 1, &a);
}

static inline tp_value_id rg_shape(random_graph_builder *b, tp_value_id x) {
    const tp_type *t = rg_type(b, x);
    tp_attrs a = TP_ATTRS_INIT;
    switch (random_below(b->rng, 3)) {
    case 0:
        if (t->ndim < 2) return TP_NO_VALUE;
        a.dim0 = 0;
        a.dim1 = t->ndim - 1;
        return rg_node(b, "transpose", &x, 1, &a);
    case 1:
        a.shape_ndim = 1;
        a.shape[0] = -1;
        return rg_node(b, "reshape", &x, 1, &a);
    default:
        a.axis = 0;
        return rg_node(b, "unsqueeze", &x, 1, &a);
    }
}

static inline tp_value_id rg_composite(random_graph_builder *b, tp_value_id x) {
    const tp_type *t = rg_type(b, x);
    tp_attrs a = TP_ATTRS_INIT;
    a.axis = -1;
    switch (random_below(b->rng, 7)) {
    case 0:
        return t->ndim ? rg_node(b, "softmax", &x, 1, &a) : TP_NO_VALUE;
    case 1:
        return t->ndim ? rg_node(b, "log_softmax", &x, 1, &a) : TP_NO_VALUE;
    case 2:
        return t->ndim ? rg_node(b, "layer_norm", &x, 1, &a) : TP_NO_VALUE;
    case 3:
        a.approximate = TP_GELU_NONE;
        return rg_node(b, "gelu", &x, 1, &a);
    case 4:
        a.approximate = TP_GELU_TANH;
        return rg_node(b, "gelu", &x, 1, &a);
    case 5:
        return rg_node(b, "silu", &x, 1, NULL);
    default:
        return rg_node(b, "softplus", &x, 1, &a);
    }
}

/* x @ constant[k, 3] (x's last dim k), or linear(x, constant[3, k]). */
static inline tp_value_id rg_matmul(random_graph_builder *b, tp_value_id x) {
    const tp_type *t = rg_type(b, x);
    if (t->ndim < 1 || t->ndim > 2) return TP_NO_VALUE;
    int64_t k = t->dims[t->ndim - 1];
    bool linear = t->ndim == 2 && random_below(b->rng, 2);
    int64_t dims[2] = {linear ? 3 : k, linear ? k : 3};
    tp_value_id w = rg_constant(b, 2, dims, -1, 1);
    if (w == TP_NO_VALUE) return w;
    tp_value_id ins[2] = {x, w};
    return rg_node(b, linear ? "linear" : "matmul", ins, 2, NULL);
}

/* arange(0, k) * full(0.25) + full(1), added to x (k = x's last dim). */
static inline tp_value_id rg_constant_chain(random_graph_builder *b, tp_value_id x) {
    const tp_type *t = rg_type(b, x);
    if (t->ndim == 0) return TP_NO_VALUE;
    tp_attrs a = TP_ATTRS_INIT;
    a.range_stop = (double)t->dims[t->ndim - 1];
    a.dtype = TP_F32;
    tp_value_id r = rg_node(b, "arange", NULL, 0, &a);
    tp_value_id ins[2] = {r, rg_full(b, 0.25)};
    tp_value_id scaled = rg_node(b, "mul", ins, 2, NULL);
    ins[0] = scaled;
    ins[1] = rg_full(b, 1.0);
    tp_value_id shifted = rg_node(b, "add", ins, 2, NULL);
    ins[0] = x;
    ins[1] = shifted;
    return rg_node(b, "add", ins, 2, NULL);
}

/* Repeats an earlier node on the same operands (a cse candidate). */
static inline tp_value_id rg_repeat(random_graph_builder *b) {
    tp_value_id v = rg_pick(b);
    const char *op = tp_graph_value_op(b->graph, v);
    if (!op) return TP_NO_VALUE;
    tp_value_id ins[64];
    int n = tp_graph_value_num_operands(b->graph, v);
    for (int i = 0; i < n; i++) ins[i] = tp_graph_value_operand(b->graph, v, i);
    tp_value_id copy = rg_node(b, op, ins, n, tp_graph_value_attrs(b->graph, v));
    if (copy == TP_NO_VALUE) return copy;
    /* Use it, so the repeat is live. */
    return rg_node(b, "neg", &copy, 1, NULL);
}

/* Builds a random graph of about `steps` generator steps. */
static inline tp_status random_graph(uint64_t seed, int steps, tp_graph **out) {
    random_source rng = {seed * 0x9E3779B97F4A7C15ull + 1};
    random_graph_builder b = {.rng = &rng};
    tp_status status = tp_graph_create("random", &b.graph);
    if (status != TP_OK) return status;
    tp_type type = {.dtype = TP_F32, .ndim = 1 + random_below(&rng, 3)};
    for (int i = 0; i < type.ndim; i++) type.dims[i] = 1 + random_below(&rng, 4);
    int inputs = 1 + random_below(&rng, 2);
    for (int i = 0; i < inputs; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%d", i);
        tp_type input_type = type;
        if (i > 0 && random_below(&rng, 2)) { /* a broadcast operand: the last dim */
            input_type.ndim = 1;
            input_type.dims[0] = type.dims[type.ndim - 1];
        }
        tp_value_id v;
        status = tp_graph_add_input(b.graph, name, &input_type, &v);
        if (status != TP_OK) break;
        rg_push(&b, v);
    }
    for (int step = 0; step < steps && status == TP_OK; step++) {
        tp_value_id x = rg_pick(&b), y;
        int kind = random_below(&rng, 20);
        if (kind < 4)
            y = rg_unary(&b, x);
        else if (kind < 6)
            y = rg_guarded_unary(&b, x);
        else if (kind < 10)
            y = rg_binary(&b, x);
        else if (kind < 12)
            y = rg_reduction(&b, x);
        else if (kind < 13)
            y = rg_shape(&b, x);
        else if (kind < 16)
            y = rg_composite(&b, x);
        else if (kind < 17)
            y = rg_matmul(&b, x);
        else if (kind < 18)
            y = rg_constant_chain(&b, x);
        else
            y = rg_repeat(&b);
        if (y != TP_NO_VALUE) rg_push(&b, y);
    }
    if (status == TP_OK) {
        tp_value_id outputs[3] = {b.pool[b.pool_size - 1], rg_pick(&b), rg_pick(&b)};
        status = tp_graph_set_outputs(b.graph, outputs, 1 + random_below(&rng, 3));
    }
    if (status != TP_OK) {
        tp_graph_destroy(b.graph);
        return status;
    }
    *out = b.graph;
    return TP_OK;
}

#endif
