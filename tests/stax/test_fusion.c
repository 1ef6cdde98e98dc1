/* stax vs eager on fused graphs: random pointwise DAGs with broadcasting,
 * reductions and matmuls in between, matmul epilogues, odd sizes (0, 1, 3,
 * 17, primes, 1023), dynamic shapes (symbols bound per compile), transposed
 * views and the threads option. */
#include "stax_harness.h"

static void compare_graph(tp_graph *g, uint64_t seed, double rtol, double atol, const char *what) {
    int n = tp_graph_num_inputs(g);
    tp_tensor *inputs[8];
    for (int i = 0; i < n; i++) {
        const tp_type *t = tp_graph_value_type(g, tp_graph_input(g, i));
        inputs[i] = stax_test_random(t->dtype, t->ndim, t->dims, seed + (uint64_t)i);
    }
    stax_test_compare(g, inputs, n, rtol, atol, what);
    for (int i = 0; i < n; i++) tp_tensor_release(inputs[i]);
}

START_TEST(random_pointwise_graphs_with_reductions_and_matmuls_match_eager) {
    stax_test_cache_dir();
    static const char *const unary[] = {"exp", "tanh", "sigmoid", "relu", "neg", "sin",
                                        "abs", "gelu", "silu",    "erf",  "cos"};
    static const char *const binary[] = {"add", "sub", "mul", "maximum", "minimum"};
    for (uint64_t seed = 1; seed <= 40; seed++) {
        uint64_t state = seed;
        tp_graph *g = NULL;
        ck_assert_int_eq(tp_graph_create("fuzz", &g), TP_OK);
        int64_t rows = 1 + (int64_t)(stax_test_next(&state) % 9),
                cols = 1 + (int64_t)(stax_test_next(&state) % 40);
        int64_t full[2] = {rows, cols}, row[1] = {cols}, column[2] = {rows, 1};
        tp_value_id pool[32];
        int count = 0;
        pool[count++] = stax_test_input(g, "a", TP_F32, 2, full);
        pool[count++] = stax_test_input(g, "b", TP_F32, 1, row);
        pool[count++] = stax_test_input(g, "c", TP_F32, 2, column);
        int steps = 4 + (int)(stax_test_next(&state) % 10);
        for (int s = 0; s < steps; s++) {
            int kind = (int)(stax_test_next(&state) % 10);
            tp_value_id x = pool[stax_test_next(&state) % (uint64_t)count];
            tp_value_id y = pool[stax_test_next(&state) % (uint64_t)count];
            if (kind < 4) {
                pool[count++] = stax_test_node(g, unary[stax_test_next(&state) % 11], &x, 1, NULL);
            } else if (kind < 8) {
                tp_value_id in[2] = {x, y};
                pool[count++] = stax_test_node(g, binary[stax_test_next(&state) % 5], in, 2, NULL);
            } else if (kind == 8) {
                tp_attrs attrs = TP_ATTRS_INIT;
                attrs.naxes = 1, attrs.axes[0] = -1, attrs.keepdim = true;
                pool[count++] = stax_test_node(g, "sum", &x, 1, &attrs);
            } else {
                const tp_type *t = tp_graph_value_type(g, x);
                int64_t k = t->ndim ? t->dims[t->ndim - 1] : 1;
                if (t->ndim == 0) continue;
                int64_t wshape[2] = {k, cols};
                char name[16];
                snprintf(name, sizeof name, "w%d", s);
                tp_value_id in[2] = {x, stax_test_input(g, name, TP_F32, 2, wshape)};
                pool[count++] = stax_test_node(g, "matmul", in, 2, NULL);
                tp_value_id act = stax_test_node(g, "tanh", &pool[count - 1], 1, NULL);
                pool[count++] = act;
            }
        }
        tp_value_id outs[2] = {pool[count - 1], pool[count / 2]};
        ck_assert_int_eq(tp_graph_set_outputs(g, outs, 2), TP_OK);
        char what[64];
        snprintf(what, sizeof what, "random graph %llu", (unsigned long long)seed);
        compare_graph(g, seed, 1e-4, 1e-5, what);
        tp_graph_destroy(g);
    }
}
END_TEST

/* x @ w + b followed by an activation and more pointwise work (the bench cases). */
START_TEST(matmul_epilogues_match_eager) {
    stax_test_cache_dir();
    static const char *const acts[] = {"relu", "sigmoid", "sin", "tanh", "gelu"};
    static const int64_t sizes[][3] = {{64, 33, 40}, {7, 300, 17}, {1, 5, 1}, {13, 17, 129}};
    for (int s = 0; s < 4; s++)
        for (int a = 0; a < 5; a++) {
            tp_graph *g = NULL;
            ck_assert_int_eq(tp_graph_create("epi", &g), TP_OK);
            int64_t xs[2] = {sizes[s][0], sizes[s][1]}, ws[2] = {sizes[s][1], sizes[s][2]},
                    bs[1] = {sizes[s][2]};
            tp_value_id in[2] = {stax_test_input(g, "x", TP_F32, 2, xs),
                                 stax_test_input(g, "w", TP_F32, 2, ws)};
            tp_value_id b = stax_test_input(g, "b", TP_F32, 1, bs);
            tp_value_id h = stax_test_node(g, "matmul", in, 2, NULL);
            tp_value_id hb[2] = {h, b};
            tp_value_id y = stax_test_node(g, "add", hb, 2, NULL);
            y = stax_test_node(g, acts[a], &y, 1, NULL);
            tp_value_id yy[2] = {y, y};
            y = stax_test_node(g, "mul", yy, 2, NULL);
            ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
            compare_graph(g, 3, 1e-4, 1e-4, acts[a]);
            tp_graph_destroy(g);
        }
}
END_TEST

/* Rows that split into 6-row and 4-row micro-kernel tiles plus a padded tail
 * (m % 6 = 0..5), over few panels (rows split across threads) and many
 * (columns split across threads), with a bias + tanh epilogue. */
START_TEST(matmul_row_edges_match_eager) {
    stax_test_cache_dir();
    static const int64_t ms[] = {1, 2, 3, 4, 5, 6, 8, 10, 14, 20, 32, 64};
    static const int64_t ns[] = {40, 130};
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 2; j++) {
            tp_graph *g = NULL;
            ck_assert_int_eq(tp_graph_create("edges", &g), TP_OK);
            int64_t xs[2] = {ms[i], 37}, ws[2] = {37, ns[j]}, bs[1] = {ns[j]};
            tp_value_id in[2] = {stax_test_input(g, "x", TP_F32, 2, xs),
                                 stax_test_input(g, "w", TP_F32, 2, ws)};
            tp_value_id hb[2] = {stax_test_node(g, "matmul", in, 2, NULL),
                                 stax_test_input(g, "b", TP_F32, 1, bs)};
            tp_value_id y = stax_test_node(g, "add", hb, 2, NULL);
            y = stax_test_node(g, "tanh", &y, 1, NULL);
            ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
            char what[64];
            snprintf(what, sizeof what, "m %lld n %lld", (long long)ms[i], (long long)ns[j]);
            compare_graph(g, 9, 1e-4, 1e-5, what);
            tp_graph_destroy(g);
        }
}
END_TEST

START_TEST(odd_sizes_match_eager) {
    stax_test_cache_dir();
    static const int64_t sizes[] = {0, 1, 3, 17, 1023, 1031};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            int64_t n = sizes[i], m = sizes[j];
            if (n * m > 200000) continue;
            tp_graph *g = NULL;
            ck_assert_int_eq(tp_graph_create("odd", &g), TP_OK);
            int64_t xs[2] = {n, m}, bs[1] = {m}, ws[2] = {m, 3};
            tp_value_id x = stax_test_input(g, "x", TP_F32, 2, xs),
                        b = stax_test_input(g, "b", TP_F32, 1, bs);
            tp_value_id w = stax_test_input(g, "w", TP_F32, 2, ws);
            tp_value_id xb[2] = {x, b}, xw[2] = {x, w};
            tp_value_id sum_in = stax_test_node(g, "add", xb, 2, NULL);
            tp_value_id e = stax_test_node(g, "exp", &sum_in, 1, NULL);
            tp_attrs attrs = TP_ATTRS_INIT;
            attrs.naxes = 1, attrs.axes[0] = 1;
            tp_value_id s = stax_test_node(g, "sum", &e, 1, &attrs);
            tp_value_id mean = stax_test_node(g, "mean", &e, 1, &attrs);
            tp_value_id mm = stax_test_node(g, "matmul", xw, 2, NULL);
            tp_value_id outs[5] = {e, s, mean, mm};
            int count = 4;
            if (m > 0) {
                tp_attrs axis = TP_ATTRS_INIT;
                axis.axis = -1;
                outs[count++] = stax_test_node(g, "softmax", &x, 1, &axis);
            }
            ck_assert_int_eq(tp_graph_set_outputs(g, outs, count), TP_OK);
            char what[64];
            snprintf(what, sizeof what, "sizes %lld x %lld", (long long)n, (long long)m);
            compare_graph(g, 5, 1e-4, 1e-5, what);
            tp_graph_destroy(g);
        }
}
END_TEST

START_TEST(dynamic_shapes_bind_per_compile) {
    stax_test_cache_dir();
    static const char text[] = "graph dyn(%x: f32[n, 8], %b: f32[8]) {\n"
                               "  %y: f32[n, 8] = add(%x, %b)\n"
                               "  %z: f32[n, 8] = tanh(%y)\n"
                               "  %s: f32[n] = sum(%z) {axes=[1], keepdim=false}\n"
                               "  return %z, %s\n"
                               "}\n";
    tp_graph *g = NULL;
    tp_status status = tp_graph_parse(text, sizeof text - 1, "dyn.tpir", &g);
    ck_assert_msg(status == TP_OK, "%s", tp_last_error());
    static const int64_t ns[] = {1, 5, 1023, 0};
    for (int i = 0; i < 4; i++) {
        int64_t xs[2] = {ns[i], 8}, bs[1] = {8};
        tp_tensor *inputs[2] = {stax_test_random(TP_F32, 2, xs, 1),
                                stax_test_random(TP_F32, 1, bs, 2)};
        stax_test_compare(g, inputs, 2, 1e-5, 1e-6, "dynamic n");
        tp_tensor_release(inputs[0]);
        tp_tensor_release(inputs[1]);
    }
    tp_graph_destroy(g);
}
END_TEST

START_TEST(transposed_views_feed_matmul_and_pointwise) {
    stax_test_cache_dir();
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("views", &g), TP_OK);
    int64_t xs[2] = {37, 21}, ws[2] = {37, 45};
    tp_value_id x = stax_test_input(g, "x", TP_F32, 2, xs),
                w = stax_test_input(g, "w", TP_F32, 2, ws);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dim0 = 0, attrs.dim1 = 1;
    tp_value_id xt = stax_test_node(g, "transpose", &x, 1, &attrs);
    tp_value_id in[2] = {xt, w};
    tp_value_id mm = stax_test_node(g, "matmul", in, 2, NULL);
    tp_value_id r = stax_test_node(g, "relu", &mm, 1, NULL);
    tp_value_id rt = stax_test_node(g, "transpose", &r, 1, &attrs);
    tp_attrs shape = TP_ATTRS_INIT;
    shape.shape_ndim = 1, shape.shape[0] = -1;
    tp_value_id flat = stax_test_node(g, "reshape", &rt, 1, &shape);
    tp_value_id outs[3] = {flat, rt, xt};
    ck_assert_int_eq(tp_graph_set_outputs(g, outs, 3), TP_OK);
    compare_graph(g, 9, 1e-4, 1e-5, "views");
    tp_graph_destroy(g);
}
END_TEST

START_TEST(threads_option_gives_the_same_results) {
    stax_test_cache_dir();
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("threads", &g), TP_OK);
    int64_t xs[2] = {300, 200}, ws[2] = {200, 100};
    tp_value_id in[2] = {stax_test_input(g, "x", TP_F32, 2, xs),
                         stax_test_input(g, "w", TP_F32, 2, ws)};
    tp_value_id y = stax_test_node(g, "matmul", in, 2, NULL);
    y = stax_test_node(g, "sigmoid", &y, 1, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    tp_tensor *inputs[2] = {stax_test_random(TP_F32, 2, xs, 1), stax_test_random(TP_F32, 2, ws, 2)};
    tp_tensor *one[1], *many[1];
    const char *serial[] = {"threads=1"}, *parallel[] = {"threads=2"};
    ck_assert_int_eq(stax_test_run("stax", g, inputs, 2, serial, 1, one), TP_OK);
    ck_assert_int_eq(stax_test_run("stax", g, inputs, 2, parallel, 1, many), TP_OK);
    stax_test_expect_close(many[0], one[0], 0, 0, "threads=2 vs threads=1");
    tp_tensor_release(one[0]);
    tp_tensor_release(many[0]);
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(stax_fusion) {
    Suite *s = suite_create("stax_fusion");
    TCase *c = tcase_create("fusion");
    tcase_set_timeout(c, 600);
    tcase_add_test(c, random_pointwise_graphs_with_reductions_and_matmuls_match_eager);
    tcase_add_test(c, matmul_epilogues_match_eager);
    tcase_add_test(c, matmul_row_edges_match_eager);
    tcase_add_test(c, odd_sizes_match_eager);
    tcase_add_test(c, dynamic_shapes_bind_per_compile);
    tcase_add_test(c, transposed_views_feed_matmul_and_pointwise);
    tcase_add_test(c, threads_option_gives_the_same_results);
    suite_add_tcase(s, c);
    return s;
}
