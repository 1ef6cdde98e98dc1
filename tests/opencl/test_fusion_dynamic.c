/* Random fusion graphs (pointwise chains with broadcasting, reductions
 * feeding back into pointwise code, matmuls with epilogues, values used
 * several times) and dynamic shapes compiled for odd sizes, against eager. */
#include <check.h>

#include "ocl_harness.h"
#include "tp_test.h"

typedef struct random_state {
    uint32_t state;
} random_state;

static uint32_t pick(random_state *random, uint32_t count) {
    random->state = random->state * 1103515245u + 12345u;
    return (random->state >> 16) % count;
}

/* Shape classes all broadcastable to [rows, cols]. */
enum { FULL, COLUMN, ROW };

typedef struct pool {
    tp_value_id values[64];
    int shapes[64];
    int count;
} pool;

static void push(pool *p, tp_value_id value, int shape) {
    if (p->count < 64) {
        p->values[p->count] = value;
        p->shapes[p->count++] = shape;
    }
}

static tp_graph *random_graph(uint32_t seed) {
    random_state random = {seed * 7919u + 1u};
    int64_t rows = 1 + pick(&random, 40), cols = 1 + pick(&random, 300);
    tp_graph *graph = oclt_graph("random");
    const int64_t full[] = {rows, cols}, square[] = {cols, cols}, column[] = {rows, 1};
    pool p = {.count = 0};
    push(&p, oclt_input(graph, "x", TP_F32, 2, full), FULL);
    push(&p, oclt_input(graph, "c", TP_F32, 2, column), COLUMN);
    tp_value_id w = oclt_input(graph, "w", TP_F32, 2, square);
    static const char *const unary[] = {"tanh", "sin", "neg", "abs", "sigmoid", "relu"};
    static const char *const binary[] = {"add", "mul", "sub", "maximum", "minimum"};
    static const char *const reductions[] = {"sum", "max", "mean", "min"};
    int steps = 6 + (int)pick(&random, 10);
    for (int s = 0; s < steps; s++) {
        int a = (int)pick(&random, (uint32_t)p.count), b = (int)pick(&random, (uint32_t)p.count);
        switch (pick(&random, 8)) {
        case 0:
        case 1:
        case 2:
            push(&p, oclt_unary(graph, unary[pick(&random, 6)], p.values[a]), p.shapes[a]);
            break;
        case 3:
        case 4:
        case 5: {
            int shape = p.shapes[a] == p.shapes[b] ? p.shapes[a] : FULL;
            push(&p, oclt_binary(graph, binary[pick(&random, 5)], p.values[a], p.values[b]), shape);
            break;
        }
        case 6: {
            if (p.shapes[a] != FULL) break;
            tp_attrs attrs = TP_ATTRS_INIT;
            attrs.naxes = 1;
            attrs.keepdim = true;
            int axis = (int)pick(&random, 2);
            attrs.axes[0] = axis;
            push(&p, oclt_node(graph, reductions[pick(&random, 4)], &p.values[a], 1, &attrs),
                 axis == 1 ? COLUMN : ROW);
            break;
        }
        default:
            if (p.shapes[a] != FULL) break;
            push(&p, oclt_binary(graph, "matmul", p.values[a], w), FULL);
            break;
        }
    }
    tp_value_id outputs[3] = {p.values[p.count - 1], p.values[pick(&random, (uint32_t)p.count)],
                              p.values[p.count / 2]};
    oclt_outputs(graph, outputs, 3);
    return graph;
}

START_TEST(random_fusion_graph_matches_eager) {
    tp_graph *graph = random_graph((uint32_t)_i);
    oclt_check_graph(graph, (uint32_t)_i);
    tp_graph_destroy(graph);
}
END_TEST

/* One dynamic graph ([n, 5] with n a symbol) compiled for several n. */
START_TEST(dynamic_shapes_compile_per_size) {
    tp_graph *graph = oclt_graph("dynamic");
    int64_t n = 0;
    ck_assert_int_eq(tp_graph_symbol(graph, "n", &n), TP_OK);
    const int64_t x_dims[] = {n, 5}, w_dims[] = {5, 3};
    tp_value_id x = oclt_input(graph, "x", TP_F32, 2, x_dims);
    tp_value_id w = oclt_input(graph, "w", TP_F32, 2, w_dims);
    tp_attrs softmax = TP_ATTRS_INIT, total = TP_ATTRS_INIT;
    softmax.axis = -1;
    total.naxes = 1;
    total.axes[0] = 0;
    tp_value_id logits = oclt_binary(graph, "matmul", x, w);
    tp_value_id outputs[] = {oclt_node(graph, "softmax", &logits, 1, &softmax),
                             oclt_node(graph, "sum", &x, 1, &total),
                             oclt_binary(graph, "mul", x, x)};
    oclt_outputs(graph, outputs, 3);
    const int64_t sizes[] = {1, 7, 1023};
    for (int i = 0; i < 3; i++) {
        tp_tensor *inputs[2] = {oclt_random(TP_F32, 2, (const int64_t[]){sizes[i], 5}, 1),
                                oclt_random(TP_F32, 2, w_dims, 2)};
        oclt_check_against_eager(graph, inputs, 2, NULL, 0);
        tp_tensor_release(inputs[0]);
        tp_tensor_release(inputs[1]);
    }
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(opencl_fusion_dynamic) {
    oclt_environment();
    Suite *suite = suite_create("opencl_fusion_dynamic");
    TCase *tc = tcase_create("fusion_dynamic");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, random_fusion_graph_matches_eager, 0, 12);
    tcase_add_test(tc, dynamic_shapes_compile_per_size);
    suite_add_tcase(suite, tc);
    return suite;
}
