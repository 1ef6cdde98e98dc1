/* tp-bench's cases: micro cases built through the public graph API, and
 * model cases read from ONNX files (tests/models/export_models.py writes
 * them). The NumPy, ONNX Runtime and PyTorch versions of each case live in
 * bench/peers.py under the same name. */
#ifndef TP_BENCH_CASES_H
#define TP_BENCH_CASES_H

#include <stdbool.h>
#include <stdint.h>

#include "tensorplay/tensorplay.h"

typedef enum bench_kind {
    BENCH_GRAPH, /* built by bench_build_graph */
    BENCH_SGEMM, /* a square matmul, also timed with OpenBLAS */
    BENCH_GEMV,  /* x [b, f] @ w [f, h] with one row (b = 1), also timed with OpenBLAS sgemv */
    BENCH_POINTWISE_C, /* also timed with the C-loop baseline */
    BENCH_MODEL,       /* read from MODELS_DIR/NAME.onnx with inputs NAME.npz */
} bench_kind;

typedef struct bench_case {
    const char *name;
    bench_kind kind;
    int64_t b, f, h; /* batch, features, hidden (or sizes) */
} bench_case;

/* Rows of the embedding case's table (BERT's WordPiece vocabulary). */
#define BENCH_EMBEDDING_VOCABULARY 30522

extern const bench_case bench_cases[];
extern const int bench_num_cases;

/* The graph of a micro case; NULL (with tp_last_error) when a node fails. */
tp_graph *bench_build_graph(const bench_case *c);

/* Deterministic inputs for every graph input, in order. */
tp_tensor **bench_make_inputs(const tp_graph *g, int *count);

/* The graph and inputs of a model case: false with `why` when the files
 * are missing or do not import (the importer's message). */
/* Whether `name` is one of the comma-separated names in `list` (NULL: every
 * case is). */
bool bench_case_selected(const char *list, const char *name);

/* max |got - want| / max |want| over two f32 tensors of one shape. */
double bench_max_relative_difference(const tp_tensor *got, const tp_tensor *want);

bool bench_load_model(const bench_case *c, const char *models_dir, tp_graph **graph,
                      tp_tensor ***inputs, int *count, char *why, size_t why_size);

#endif
