/* tp-bench's case table and graph builders (see cases.h). */
#include "cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tensorplay/onnx.h"

const bench_case bench_cases[] = {
    {"mm-bias", BENCH_GRAPH, 64, 256, 512},
    {"mm-bias-relu", BENCH_GRAPH, 128, 512, 1024},
    {"mm-bias-sigmoid", BENCH_GRAPH, 128, 512, 1024},
    {"mm-bias-sin", BENCH_GRAPH, 64, 1024, 1024},
    {"mm-bias-tanh", BENCH_GRAPH, 64, 1024, 1024},
    {"mm-bias-pointwise", BENCH_GRAPH, 32, 1024, 2048},
    {"mm-bias-chain", BENCH_GRAPH, 64, 256, 512},
    {"two-linear-relu", BENCH_GRAPH, 64, 256, 256},
    {"transpose-mm", BENCH_GRAPH, 256, 64, 512},
    {"mm-reduce", BENCH_GRAPH, 128, 512, 1024},
    {"tanh-affine", BENCH_POINTWISE_C, 16 << 20, 0, 0},
    {"add", BENCH_POINTWISE_C, 16 << 20, 0, 0},
    {"sgemm-1024", BENCH_SGEMM, 1024, 0, 0},
    {"sgemm-2048", BENCH_SGEMM, 2048, 0, 0},
    {"gemv-1280x1000", BENCH_GEMV, 1, 1280, 1000}, /* MobileNetV2's classifier, one image */
    {"softmax", BENCH_GRAPH, 4096, 4096, 0},
    {"layer_norm", BENCH_GRAPH, 4096, 1024, 0},
    {"embedding", BENCH_GRAPH, 8, 128, 768}, /* BERT's 30,522-word table, 8x128 token ids */
    {"encoder", BENCH_MODEL, 8, 128, 256},
    {"gpt2-block", BENCH_MODEL, 1, 128, 768},
    {"resnet18-b1", BENCH_MODEL, 1, 3, 224},
    {"resnet18-b8", BENCH_MODEL, 8, 3, 224},
    {"mobilenetv2-b1", BENCH_MODEL, 1, 3, 224},
    {"mobilenetv2-b8", BENCH_MODEL, 8, 3, 224},
};
const int bench_num_cases = (int)(sizeof bench_cases / sizeof *bench_cases);

static tp_value_id in(tp_graph *g, const char *name, int ndim, int64_t d0, int64_t d1) {
    tp_type t = {.dtype = TP_F32, .ndim = ndim, .dims = {d0, d1}};
    tp_value_id id = TP_NO_VALUE;
    tp_graph_add_input(g, name, &t, &id);
    return id;
}

static tp_value_id op(tp_graph *g, const char *name, tp_value_id a, tp_value_id b,
                      const tp_attrs *attrs) {
    tp_value_id ids[2] = {a, b}, out = TP_NO_VALUE;
    if (tp_graph_add_node(g, name, ids, b == TP_NO_VALUE ? 1 : 2, attrs, NULL, &out) != TP_OK)
        fprintf(stderr, "tp-bench: %s: %s\n", name, tp_last_error());
    return out;
}

static tp_value_id unary(tp_graph *g, const char *name, tp_value_id a) {
    return op(g, name, a, TP_NO_VALUE, NULL);
}

static tp_value_id scalar(tp_graph *g, double v) {
    tp_attrs a = TP_ATTRS_INIT;
    a.dtype = TP_F32, a.value = v;
    tp_value_id out = TP_NO_VALUE;
    tp_graph_add_node(g, "full", NULL, 0, &a, NULL, &out);
    return out;
}

/* x @ w + bias, then the case's epilogue. */
static tp_value_id build_linear_case(tp_graph *g, const bench_case *c) {
    const char *n = c->name;
    tp_value_id x;
    if (!strcmp(n, "transpose-mm")) {
        tp_attrs t = TP_ATTRS_INIT;
        t.dim0 = 0, t.dim1 = 1;
        x = op(g, "transpose", in(g, "xt", 2, c->f, c->b), TP_NO_VALUE, &t);
    } else {
        x = in(g, "x", 2, c->b, c->f);
    }
    tp_value_id w = in(g, "w", 2, c->f, c->h), bias = in(g, "bias", 1, c->h, 0);
    tp_value_id h = op(g, "add", op(g, "matmul", x, w, NULL), bias, NULL);
    if (!strcmp(n, "mm-bias") || !strcmp(n, "transpose-mm")) return h;
    if (!strcmp(n, "mm-bias-relu")) return unary(g, "relu", h);
    if (!strcmp(n, "mm-bias-sigmoid")) return unary(g, "sigmoid", h);
    if (!strcmp(n, "mm-bias-sin")) return unary(g, "sin", h);
    if (!strcmp(n, "mm-bias-tanh")) return unary(g, "tanh", h);
    if (!strcmp(n, "mm-bias-pointwise"))
        return op(g, "mul", unary(g, "sigmoid", h), op(g, "add", h, scalar(g, 1.0), NULL), NULL);
    if (!strcmp(n, "mm-bias-chain"))
        return unary(g, "tanh",
                     op(g, "sub", op(g, "mul", unary(g, "relu", h), scalar(g, 2.0), NULL),
                        scalar(g, 1.0), NULL));
    if (!strcmp(n, "mm-reduce")) {
        tp_attrs s = TP_ATTRS_INIT;
        s.naxes = 1, s.axes[0] = 1;
        return op(g, "sum", h, TP_NO_VALUE, &s);
    }
    /* two-linear-relu */
    tp_value_id w2 = in(g, "w2", 2, c->h, c->h), b2 = in(g, "b2", 1, c->h, 0);
    return op(g, "add", op(g, "matmul", unary(g, "relu", h), w2, NULL), b2, NULL);
}

tp_graph *bench_build_graph(const bench_case *c) {
    tp_graph *g = NULL;
    if (tp_graph_create("bench", &g) != TP_OK) return NULL;
    const char *n = c->name;
    tp_value_id y;
    if (!strncmp(n, "mm-", 3) || !strcmp(n, "two-linear-relu") || !strcmp(n, "transpose-mm")) {
        y = build_linear_case(g, c);
    } else if (!strcmp(n, "tanh-affine")) {
        tp_value_id x = in(g, "x", 1, c->b, 0);
        tp_value_id affine =
            op(g, "add", op(g, "mul", x, scalar(g, 2.0), NULL), scalar(g, 1.0), NULL);
        y = op(g, "mul", unary(g, "tanh", affine), x, NULL);
    } else if (!strcmp(n, "add")) {
        y = op(g, "add", in(g, "a", 1, c->b, 0), in(g, "b", 1, c->b, 0), NULL);
    } else if (!strcmp(n, "embedding")) {
        tp_type ids = {.dtype = TP_I64, .ndim = 2, .dims = {c->b, c->f}};
        tp_value_id ids_id = TP_NO_VALUE;
        tp_value_id table = in(g, "table", 2, BENCH_EMBEDDING_VOCABULARY, c->h);
        tp_graph_add_input(g, "ids", &ids, &ids_id);
        y = op(g, "gather", table, ids_id, NULL);
    } else if (!strcmp(n, "softmax") || !strcmp(n, "layer_norm")) {
        tp_attrs a = TP_ATTRS_INIT;
        a.axis = -1;
        y = op(g, n, in(g, "x", 2, c->b, c->f), TP_NO_VALUE, &a);
    } else if (c->kind == BENCH_GEMV) { /* the weight an input: read by every call */
        tp_value_id x = in(g, "x", 2, c->b, c->f), w = in(g, "w", 2, c->f, c->h); /* in order */
        y = op(g, "matmul", x, w, NULL);
    } else { /* sgemm */
        y = op(g, "matmul", in(g, "a", 2, c->b, c->b), in(g, "b", 2, c->b, c->b), NULL);
    }
    if (y == TP_NO_VALUE || tp_graph_set_outputs(g, &y, 1) != TP_OK) {
        tp_graph_destroy(g);
        return NULL;
    }
    return g;
}

tp_tensor **bench_make_inputs(const tp_graph *g, int *count) {
    *count = tp_graph_num_inputs(g);
    tp_tensor **inputs = calloc((size_t)*count, sizeof *inputs);
    for (int i = 0; inputs && i < *count; i++) {
        const tp_type *t = tp_graph_value_type(g, tp_graph_input(g, i));
        tp_tensor_create(t->dtype, t->ndim, t->dims, &inputs[i]);
        if (t->dtype == TP_I64) { /* token ids: spread over the embedding table */
            int64_t *ids = tp_tensor_data_mut(inputs[i]);
            for (int64_t k = 0; k < tp_tensor_numel(inputs[i]); k++)
                ids[k] = (k * 7919 + 104729) % BENCH_EMBEDDING_VOCABULARY;
            continue;
        }
        float *d = tp_tensor_data_mut(inputs[i]);
        for (int64_t k = 0; k < tp_tensor_numel(inputs[i]); k++)
            d[k] = (float)((k * 7919 + i * 104729) % 2001 - 1000) * 1e-3f;
    }
    return inputs;
}

bool bench_load_model(const bench_case *c, const char *models_dir, tp_graph **graph,
                      tp_tensor ***inputs, int *count, char *why, size_t why_size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.onnx", models_dir, c->name);
    *graph = NULL, *inputs = NULL, *count = 0;
    if (access(path, R_OK) != 0) {
        snprintf(why, why_size, "%s is missing (tests/models/run.sh --export-only writes it)",
                 path);
        return false;
    }
    if (tp_graph_load_onnx(path, graph) != TP_OK) {
        snprintf(why, why_size, "%s", tp_last_error());
        return false;
    }
    *count = tp_graph_num_inputs(*graph);
    *inputs = calloc((size_t)*count, sizeof **inputs);
    for (int i = 0; *inputs && i < *count; i++) {
        const char *name = tp_graph_value_name(*graph, tp_graph_input(*graph, i));
        snprintf(path, sizeof path, "%s/%s.inputs/%s.npy", models_dir, c->name, name);
        if (tp_npy_load(path, &(*inputs)[i]) != TP_OK) {
            snprintf(why, why_size, "%s", tp_last_error());
            for (int k = 0; k < i; k++) tp_tensor_release((*inputs)[k]);
            free(*inputs), *inputs = NULL;
            tp_graph_destroy(*graph), *graph = NULL;
            return false;
        }
    }
    return true;
}

bool bench_case_selected(const char *list, const char *name) {
    if (!list) return true;
    size_t length = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += length)
        if ((p == list || p[-1] == ',') && (p[length] == ',' || !p[length])) return true;
    return false;
}

double bench_max_relative_difference(const tp_tensor *got, const tp_tensor *want) {
    const float *g = tp_tensor_data(got), *w = tp_tensor_data(want);
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < tp_tensor_numel(want); i++) {
        diff = fmax(diff, fabs((double)g[i] - w[i]));
        scale = fmax(scale, fabs((double)w[i]));
    }
    return scale > 0 ? diff / scale : diff;
}
