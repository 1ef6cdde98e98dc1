/* stax: kernels whose code is the same share one body, compiled once
 * (stax_kernel_bodies.c); a body only one kernel calls is inlined into it as
 * before. The results are checked against the arithmetic done here. */
#include <sys/stat.h>

#include "stax_harness.h"
#include "stax_kernel_bodies.h"

/* ---- the table, on hand-made body text ---- */

/* A body reading `in` and writing `out` (slot pointers named %sN). */
static void copy_body(char *text, size_t size, int in, int out, const char *op) {
    snprintf(text, size,
             "  %%v = load float, ptr %%s%d\n  %%w = %s float %%v, %%v\n"
             "  store float %%w, ptr %%s%d\n",
             in, op, out);
}

START_TEST(bodies_name_slots_by_first_use_whatever_their_numbers) {
    stax_kernel_bodies table = {0};
    bool used[8] = {false};
    int32_t order[8];
    char text[256];
    /* reads slot 5, writes slot 2: the arguments are (5, 2) */
    used[2] = used[5] = true;
    copy_body(text, sizeof text, 5, 2, "fmul");
    ck_assert_int_eq(stax_kernel_bodies_add(&table, text, used, 8, order), 0);
    ck_assert_int_eq(order[0], 5);
    ck_assert_int_eq(order[1], 2);
    /* the same code reading slot 1 and writing slot 6 (numbered the other
     * way round) is the same body, its arguments (1, 6) */
    memset(used, 0, sizeof used);
    used[1] = used[6] = true;
    copy_body(text, sizeof text, 1, 6, "fmul");
    ck_assert_int_eq(stax_kernel_bodies_add(&table, text, used, 8, order), 0);
    ck_assert_int_eq(order[0], 1);
    ck_assert_int_eq(order[1], 6);
    ck_assert_int_eq(table.uses[0], 2);
    /* other code is another body, its slots renamed the same way */
    copy_body(text, sizeof text, 1, 6, "fadd");
    ck_assert_int_eq(stax_kernel_bodies_add(&table, text, used, 8, order), 1);
    ck_assert_ptr_nonnull(strstr(table.texts[1], "%arg0"));
    ck_assert_ptr_null(strstr(table.texts[1], "%s1"));
    /* a used slot the text never names still gets an argument, last */
    used[3] = true;
    ck_assert_int_eq(stax_kernel_bodies_add(&table, text, used, 8, order), 2);
    ck_assert_int_eq(order[0], 1);
    ck_assert_int_eq(order[1], 6);
    ck_assert_int_eq(order[2], 3);
    ck_assert_int_eq(table.num_args[2], 3);
    stax_kernel_bodies_free(&table);
}
END_TEST

/* ---- kernels of a graph ---- */

/* x*x + x of each of `count` inputs of `n` floats (one kernel each: the
 * outputs share no value), then x0 - x1 (a kernel of its own body). */
static tp_graph *square_plus_graphs(int count, int64_t n) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("shared_bodies", &g), TP_OK);
    tp_value_id inputs[4], outputs[5];
    for (int i = 0; i < count; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        inputs[i] = stax_test_input(g, name, TP_F32, 1, &n);
        tp_value_id square =
            stax_test_node(g, "mul", (tp_value_id[]){inputs[i], inputs[i]}, 2, NULL);
        outputs[i] = stax_test_node(g, "add", (tp_value_id[]){square, inputs[i]}, 2, NULL);
    }
    outputs[count] = stax_test_node(g, "sub", (tp_value_id[]){inputs[0], inputs[1]}, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, outputs, count + 1), TP_OK);
    return g;
}

START_TEST(equal_kernels_share_one_body_and_compute_their_own_slots) {
    stax_test_cache_dir();
    const int count = 3;
    const int64_t n = 1000;
    tp_graph *g = square_plus_graphs(count, n);
    tp_tensor *inputs[3];
    for (int i = 0; i < count; i++) inputs[i] = stax_test_random(TP_F32, 1, &n, 40 + (uint64_t)i);
    char ir[4300], option[4400];
    snprintf(ir, sizeof ir, "%s/shared_bodies.ll", tp_test_temp_dir());
    snprintf(option, sizeof option, "dump_ir=%s", ir);
    const char *options[] = {option};
    tp_tensor *outputs[4] = {0};
    tp_status status = stax_test_run("stax", g, inputs, count, options, 1, outputs);
    ck_assert_msg(status == TP_OK, "%s", tp_last_error());
    /* the three x*x + x kernels call one body; the sub's body is inlined */
    ck_assert_int_eq(stax_test_ir_definitions(ir, "_body0("), 1);
    ck_assert_int_eq(stax_test_ir_definitions(ir, "_body"), 1);
    for (int i = 0; i < count; i++) {
        const float *x = tp_tensor_data(inputs[i]);
        const float *got = tp_tensor_data(outputs[i]);
        for (int64_t j = 0; j < n; j++) {
            double want = (double)x[j] * x[j] + x[j];
            ck_assert_msg(fabs(got[j] - want) <= 1e-6 * fabs(want) + 1e-7,
                          "output %d element %lld: %.9g, want %.9g", i, (long long)j, got[j], want);
        }
    }
    const float *x0 = tp_tensor_data(inputs[0]), *x1 = tp_tensor_data(inputs[1]);
    const float *difference = tp_tensor_data(outputs[count]);
    for (int64_t j = 0; j < n; j++) ck_assert_float_eq(difference[j], x0[j] - x1[j]);
    for (int i = 0; i < count; i++) tp_tensor_release(inputs[i]);
    for (int i = 0; i <= count; i++) tp_tensor_release(outputs[i]);
    tp_graph_destroy(g);
}
END_TEST

/* The same expression over tensors of different sizes (each above the
 * emitter's unroll threshold: the flat loop carries no size) is one body:
 * MobileNetV2's clip epilogues on its ten output sizes compile once. */
START_TEST(one_expression_over_different_sizes_shares_one_body) {
    stax_test_cache_dir();
    const int64_t sizes[3] = {1000, 3001, 777};
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("sizes", &g), TP_OK);
    tp_value_id outputs[3];
    tp_tensor *inputs[3];
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        tp_value_id x = stax_test_input(g, name, TP_F32, 1, &sizes[i]);
        tp_value_id square = stax_test_node(g, "mul", (tp_value_id[]){x, x}, 2, NULL);
        outputs[i] = stax_test_node(g, "add", (tp_value_id[]){square, x}, 2, NULL);
        inputs[i] = stax_test_random(TP_F32, 1, &sizes[i], 60 + (uint64_t)i);
    }
    ck_assert_int_eq(tp_graph_set_outputs(g, outputs, 3), TP_OK);
    char ir[4300], option[4400];
    snprintf(ir, sizeof ir, "%s/sizes.ll", tp_test_temp_dir());
    snprintf(option, sizeof option, "dump_ir=%s", ir);
    const char *options[] = {option};
    tp_tensor *results[3] = {0};
    tp_status status = stax_test_run("stax", g, inputs, 3, options, 1, results);
    ck_assert_msg(status == TP_OK, "%s", tp_last_error());
    ck_assert_int_eq(stax_test_ir_definitions(ir, "_body"), 1);
    for (int i = 0; i < 3; i++) {
        const float *x = tp_tensor_data(inputs[i]), *got = tp_tensor_data(results[i]);
        for (int64_t j = 0; j < sizes[i]; j++) {
            double want = (double)x[j] * x[j] + x[j];
            ck_assert_msg(fabs(got[j] - want) <= 1e-6 * fabs(want) + 1e-7,
                          "output %d element %lld: %.9g, want %.9g", i, (long long)j, got[j], want);
        }
        tp_tensor_release(inputs[i]);
        tp_tensor_release(results[i]);
    }
    tp_graph_destroy(g);
}
END_TEST

START_TEST(a_body_called_once_is_inlined) {
    stax_test_cache_dir();
    const int64_t n = 64;
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("single", &g), TP_OK);
    tp_value_id x = stax_test_input(g, "x", TP_F32, 1, &n);
    tp_value_id y = stax_test_node(g, "mul", (tp_value_id[]){x, x}, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &y, 1), TP_OK);
    tp_tensor *input = stax_test_random(TP_F32, 1, &n, 7);
    char ir[4300], option[4400];
    snprintf(ir, sizeof ir, "%s/single.ll", tp_test_temp_dir());
    snprintf(option, sizeof option, "dump_ir=%s", ir);
    const char *options[] = {option};
    tp_tensor *output = NULL;
    ck_assert_int_eq(stax_test_run("stax", g, &input, 1, options, 1, &output), TP_OK);
    ck_assert_int_eq(stax_test_ir_definitions(ir, "_body"), 0);
    const float *in = tp_tensor_data(input), *got = tp_tensor_data(output);
    for (int64_t j = 0; j < n; j++) ck_assert_float_eq(got[j], in[j] * in[j]);
    tp_tensor_release(input);
    tp_tensor_release(output);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(stax_shared_bodies) {
    Suite *s = suite_create("stax_shared_bodies");
    TCase *c = tcase_create("shared_bodies");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, bodies_name_slots_by_first_use_whatever_their_numbers);
    tcase_add_test(c, a_body_called_once_is_inlined);
    tcase_add_test(c, equal_kernels_share_one_body_and_compute_their_own_slots);
    tcase_add_test(c, one_expression_over_different_sizes_shares_one_body);
    suite_add_tcase(s, c);
    return s;
}
