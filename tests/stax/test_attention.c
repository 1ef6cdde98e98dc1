/* stax's fused attention step: softmax(Q K^T * scale + mask) V written as
 * the ONNX importer gives PyTorch's exports (the encoder scales q and k^T
 * by sqrt(scale) each; GPT-2 multiplies the scores and adds a causal mask of
 * -inf) and as a user writes it (a division by sqrt(d)), checked against a
 * double-precision loop of the unfused math written here: keys past one key
 * block and not a multiple of the tile, odd head dims, with and without a
 * mask, masks broadcast over batch and heads, more batch x heads than
 * threads, every micro-kernel family (STAX_GEMM_KERNEL). The profile's
 * kernel names show whether the fusion fired: once per pattern, not when an
 * intermediate has another user, not for f64, not with STAX_ATTENTION=off. */
#include "stax_harness.h"
#include "tensorplay/profile.h"

/* ---- the graph as text ---- */

typedef enum mask_kind {
    MASK_NONE = 0,
    MASK_CAUSAL_INF,  /* [q, k]: -inf above the diagonal (GPT-2's export) */
    MASK_CAUSAL_1E9,  /* [q, k]: -1e9 above the diagonal */
    MASK_PADDING,     /* [b, 1, 1, k]: 0 or -1e9 per key, broadcast over heads and rows */
    MASK_ROW_ALL_INF, /* [q, k]: causal -inf, and query row 0 masked entirely */
} mask_kind;

typedef enum scale_style {
    SCALE_SCORES_MUL = 0, /* mul(matmul(q, kt), s) */
    SCALE_OPERANDS_MUL,   /* matmul(mul(q, sqrt s), mul(kt, sqrt s)) */
    SCALE_SCORES_DIV,     /* div(matmul(q, kt), sqrt(d)) */
} scale_style;

typedef struct attention_shape {
    int64_t batch, heads, queries, keys, head_dim, value_dim;
    mask_kind mask;
    scale_style scale;
} attention_shape;

static double scale_of(const attention_shape *s) {
    return 1.0 / sqrt((double)s->head_dim);
}

static int64_t mask_dims(const attention_shape *s, int64_t *dims) {
    if (s->mask == MASK_PADDING) {
        dims[0] = s->batch, dims[1] = 1, dims[2] = 1, dims[3] = s->keys;
        return 4;
    }
    dims[0] = s->queries, dims[1] = s->keys;
    return 2;
}

/* The pattern as .tpir; `dtype` f32 or f64; `extra_output` also returns the
 * softmax (an intermediate with another user). */
static tp_graph *attention_graph(const attention_shape *s, const char *dtype, bool extra_output) {
    char text[8192], lead[64], mask_decl[128] = "", mask_type[64];
    int64_t b = s->batch, h = s->heads, q = s->queries, k = s->keys, d = s->head_dim,
            dv = s->value_dim;
    snprintf(lead, sizeof lead, "%lld, %lld", (long long)b, (long long)h);
    if (s->mask) {
        int64_t md[4];
        int64_t n = mask_dims(s, md);
        if (n == 4)
            snprintf(mask_type, sizeof mask_type, "%s[%lld, 1, 1, %lld]", dtype, (long long)md[0],
                     (long long)md[3]);
        else
            snprintf(mask_type, sizeof mask_type, "%s[%lld, %lld]", dtype, (long long)md[0],
                     (long long)md[1]);
        snprintf(mask_decl, sizeof mask_decl, ", %%mask: %s", mask_type);
    }
    int used = snprintf(text, sizeof text,
                        "graph heads(%%q: %s[%s, %lld, %lld], %%k: %s[%s, %lld, %lld], "
                        "%%v: %s[%s, %lld, %lld]%s) {\n"
                        "  %%kt: %s[%s, %lld, %lld] = transpose(%%k) {dim0=2, dim1=3}\n",
                        dtype, lead, (long long)q, (long long)d, dtype, lead, (long long)k,
                        (long long)d, dtype, lead, (long long)k, (long long)dv, mask_decl, dtype,
                        lead, (long long)d, (long long)k);
    double scale = scale_of(s);
    const char *logits = "scaled";
    if (s->scale == SCALE_OPERANDS_MUL) {
        used += snprintf(text + used, sizeof text - (size_t)used,
                         "  %%root: %s[1] = constant() {value=[%.17g]}\n"
                         "  %%qs: %s[%s, %lld, %lld] = mul(%%q, %%root)\n"
                         "  %%kts: %s[%s, %lld, %lld] = mul(%%kt, %%root)\n"
                         "  %%scaled: %s[%s, %lld, %lld] = matmul(%%qs, %%kts)\n",
                         dtype, sqrt(scale), dtype, lead, (long long)q, (long long)d, dtype, lead,
                         (long long)d, (long long)k, dtype, lead, (long long)q, (long long)k);
    } else {
        bool divides = s->scale == SCALE_SCORES_DIV;
        used +=
            snprintf(text + used, sizeof text - (size_t)used,
                     "  %%scores: %s[%s, %lld, %lld] = matmul(%%q, %%kt)\n"
                     "  %%s: %s[] = constant() {value=[%.17g]}\n"
                     "  %%scaled: %s[%s, %lld, %lld] = %s(%%scores, %%s)\n",
                     dtype, lead, (long long)q, (long long)k, dtype, divides ? 1.0 / scale : scale,
                     dtype, lead, (long long)q, (long long)k, divides ? "div" : "mul");
    }
    if (s->mask) {
        used += snprintf(text + used, sizeof text - (size_t)used,
                         "  %%masked: %s[%s, %lld, %lld] = add(%%scaled, %%mask)\n", dtype, lead,
                         (long long)q, (long long)k);
        logits = "masked";
    }
    snprintf(text + used, sizeof text - (size_t)used,
             "  %%p: %s[%s, %lld, %lld] = softmax(%%%s) {axis=-1}\n"
             "  %%ctx: %s[%s, %lld, %lld] = matmul(%%p, %%v)\n"
             "  return %%ctx%s\n}\n",
             dtype, lead, (long long)q, (long long)k, logits, dtype, lead, (long long)q,
             (long long)dv, extra_output ? ", %p" : "");
    tp_graph *g = NULL;
    tp_status status = tp_graph_parse(text, strlen(text), "attention.tpir", &g);
    ck_assert_msg(status == TP_OK, "parse: %s\n%s", tp_last_error(), text);
    return g;
}

/* ---- inputs and the double-precision reference ---- */

static double mask_at(const attention_shape *s, const float *mask, int64_t b, int64_t i,
                      int64_t j) {
    if (!s->mask) return 0.0;
    if (s->mask == MASK_PADDING) return mask[b * s->keys + j];
    return mask[i * s->keys + j];
}

static tp_tensor *make_mask(const attention_shape *s) {
    int64_t dims[4];
    int ndim = (int)mask_dims(s, dims);
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, ndim, dims, &t), TP_OK);
    float *m = tp_tensor_data_mut(t);
    if (s->mask == MASK_PADDING) {
        for (int64_t b = 0; b < s->batch; b++)
            for (int64_t j = 0; j < s->keys; j++)
                m[b * s->keys + j] = (j + b) % 5 == 3 ? -1e9f : 0.0f; /* key 0 stays visible */
        return t;
    }
    float masked = s->mask == MASK_CAUSAL_1E9 ? -1e9f : -INFINITY;
    /* queries are the last `queries` positions of the keys, as in a decoder */
    int64_t shift = s->keys - s->queries;
    for (int64_t i = 0; i < s->queries; i++)
        for (int64_t j = 0; j < s->keys; j++)
            m[i * s->keys + j] =
                j > i + shift || (s->mask == MASK_ROW_ALL_INF && i == 0) ? masked : 0.0f;
    return t;
}

/* softmax((q k^T) * scale + mask) v per (batch, head), in double. */
static double *reference(const attention_shape *s, const float *q, const float *k, const float *v,
                         const float *mask) {
    int64_t bh = s->batch * s->heads, nq = s->queries, nk = s->keys, d = s->head_dim,
            dv = s->value_dim;
    double *out = calloc((size_t)(bh * nq * dv), sizeof *out);
    double *logits = malloc(sizeof *logits * (size_t)nk);
    double scale = scale_of(s);
    for (int64_t x = 0; x < bh; x++) {
        int64_t b = x / s->heads;
        for (int64_t i = 0; i < nq; i++) {
            double max = -INFINITY;
            for (int64_t j = 0; j < nk; j++) {
                double dot = 0;
                for (int64_t c = 0; c < d; c++)
                    dot += (double)q[(x * nq + i) * d + c] * k[(x * nk + j) * d + c];
                logits[j] = dot * scale + mask_at(s, mask, b, i, j);
                if (logits[j] > max) max = logits[j];
            }
            double sum = 0;
            for (int64_t j = 0; j < nk; j++) sum += logits[j] = exp(logits[j] - max);
            double *row = out + (x * nq + i) * dv;
            for (int64_t j = 0; j < nk; j++)
                for (int64_t c = 0; c < dv; c++)
                    row[c] += logits[j] / sum * v[(x * nk + j) * dv + c];
        }
    }
    free(logits);
    return out;
}

/* ---- the kernels a run reports ---- */

typedef struct kernel_names {
    int attention, softmax, total;
    char names[512];
} kernel_names;

static void count_kernel(const tp_profile_event *event, void *user) {
    kernel_names *seen = user;
    if (strcmp(event->phase, "kernel")) return;
    seen->total++;
    size_t used = strlen(seen->names);
    snprintf(seen->names + used, sizeof seen->names - used, " %s", event->detail);
    /* the fused step's name: attention_BATCHxQUERIESxKEYSxHEADDIM */
    if (!strncmp(event->detail, "attention_", 10) && event->detail[10] >= '0' &&
        event->detail[10] <= '9')
        seen->attention++;
    if (strstr(event->detail, "softmax")) seen->softmax++;
}

typedef struct attention_run {
    tp_tensor *inputs[4];
    int num_inputs;
    tp_tensor *outputs[2];
    kernel_names kernels;
} attention_run;

static void run_on_stax(const attention_shape *s, bool extra_output, attention_run *run) {
    int64_t b = s->batch, h = s->heads;
    int64_t qd[4] = {b, h, s->queries, s->head_dim}, kd[4] = {b, h, s->keys, s->head_dim},
            vd[4] = {b, h, s->keys, s->value_dim};
    memset(run, 0, sizeof *run);
    run->inputs[0] = stax_test_random(TP_F32, 4, qd, 11);
    run->inputs[1] = stax_test_random(TP_F32, 4, kd, 12);
    run->inputs[2] = stax_test_random(TP_F32, 4, vd, 13);
    run->num_inputs = 3;
    if (s->mask) run->inputs[run->num_inputs++] = make_mask(s);
    tp_graph *g = attention_graph(s, "f32", extra_output);
    tp_profile_set_handler(count_kernel, &run->kernels);
    tp_status status =
        stax_test_run("stax", g, run->inputs, run->num_inputs, NULL, 0, run->outputs);
    tp_profile_set_handler(NULL, NULL);
    ck_assert_msg(status == TP_OK, "stax: %s", tp_last_error());
    tp_graph_destroy(g);
}

static void release_run(attention_run *run) {
    for (int i = 0; i < run->num_inputs; i++) tp_tensor_release(run->inputs[i]);
    for (int i = 0; i < 2; i++) tp_tensor_release(run->outputs[i]);
}

static void expect_reference(const attention_shape *s, const attention_run *run, const char *what) {
    const float *mask = s->mask ? tp_tensor_data(run->inputs[3]) : NULL;
    double *want = reference(s, tp_tensor_data(run->inputs[0]), tp_tensor_data(run->inputs[1]),
                             tp_tensor_data(run->inputs[2]), mask);
    const float *got = tp_tensor_data(run->outputs[0]);
    int64_t n = tp_tensor_numel(run->outputs[0]);
    ck_assert_int_eq(n, s->batch * s->heads * s->queries * s->value_dim);
    for (int64_t i = 0; i < n; i++) {
        bool ok =
            isnan(want[i]) ? isnan(got[i]) : fabs(got[i] - want[i]) <= 2e-5 + 1e-4 * fabs(want[i]);
        ck_assert_msg(ok, "%s: element %lld is %.9g, the double reference %.9g", what, (long long)i,
                      (double)got[i], want[i]);
    }
    free(want);
}

static void check_fused(const attention_shape *s, const char *what) {
    attention_run run;
    run_on_stax(s, false, &run);
    ck_assert_msg(run.kernels.attention == 1 && run.kernels.total == 1,
                  "%s: kernels%s: the pattern was not fused into one", what, run.kernels.names);
    expect_reference(s, &run, what);
    release_run(&run);
}

/* ---- tests ---- */

START_TEST(keys_past_a_block_odd_head_dims_and_a_causal_mask_match_the_reference) {
    stax_test_cache_dir();
    /* 300 keys: a 256-key block and a partial one; 37 queries: not a tile multiple */
    attention_shape s = {2, 3, 37, 300, 33, 19, MASK_CAUSAL_INF, SCALE_SCORES_MUL};
    check_fused(&s, "2x3 heads, 37 queries, 300 keys, d 33, dv 19, causal -inf");
    attention_shape t = {1, 2, 45, 513, 7, 5, MASK_CAUSAL_1E9, SCALE_SCORES_DIV};
    check_fused(&t, "45 queries, 513 keys, d 7, causal -1e9, divided by sqrt(d)");
}
END_TEST

START_TEST(encoder_shapes_with_scaled_operands_match_the_reference) {
    stax_test_cache_dir();
    /* batch 8 x 4 heads: more batch x heads than threads */
    attention_shape s = {8, 4, 128, 128, 64, 64, MASK_NONE, SCALE_OPERANDS_MUL};
    check_fused(&s, "encoder 8x4 heads, 128 tokens, d 64, q and k^T scaled");
}
END_TEST

START_TEST(gpt2_shapes_with_a_causal_mask_match_the_reference) {
    stax_test_cache_dir();
    attention_shape s = {1, 12, 128, 128, 64, 64, MASK_CAUSAL_INF, SCALE_SCORES_MUL};
    check_fused(&s, "GPT-2 12 heads, 128 tokens, causal -inf");
}
END_TEST

START_TEST(a_padding_mask_broadcast_over_heads_and_rows_matches_the_reference) {
    stax_test_cache_dir();
    attention_shape s = {3, 2, 20, 70, 16, 24, MASK_PADDING, SCALE_SCORES_MUL};
    check_fused(&s, "padding mask [3, 1, 1, 70]");
}
END_TEST

START_TEST(tiny_shapes_match_the_reference) {
    stax_test_cache_dir();
    attention_shape one = {1, 1, 1, 1, 1, 1, MASK_NONE, SCALE_SCORES_MUL};
    check_fused(&one, "1 query, 1 key, d 1");
    attention_shape few = {2, 1, 3, 2, 65, 17, MASK_NONE, SCALE_SCORES_DIV};
    check_fused(&few, "3 queries, 2 keys, d 65");
}
END_TEST

START_TEST(every_micro_kernel_family_matches_the_reference) {
    stax_test_cache_dir();
    /* the JIT splits vectors wider than the host's: every family runs here */
    static const char *const families[] = {"avx512", "avx2", "generic"};
    attention_shape shapes[] = {{2, 3, 37, 300, 33, 19, MASK_CAUSAL_INF, SCALE_SCORES_MUL},
                                {1, 2, 101, 64, 64, 40, MASK_PADDING, SCALE_OPERANDS_MUL}};
    for (int f = 0; f < 3; f++)
        for (int i = 0; i < 2; i++) {
            setenv("STAX_GEMM_KERNEL", families[f], 1);
            char what[128];
            snprintf(what, sizeof what, "family %s, shape %d", families[f], i);
            check_fused(&shapes[i], what);
        }
    unsetenv("STAX_GEMM_KERNEL");
}
END_TEST

START_TEST(a_fully_masked_row_is_nan_as_unfused) {
    stax_test_cache_dir();
    attention_shape s = {1, 2, 9, 40, 8, 8, MASK_ROW_ALL_INF, SCALE_SCORES_MUL};
    attention_run run;
    run_on_stax(&s, false, &run);
    ck_assert_int_eq(run.kernels.attention, 1);
    const float *got = tp_tensor_data(run.outputs[0]);
    for (int64_t x = 0; x < 2; x++)
        for (int64_t c = 0; c < 8; c++) ck_assert(isnan(got[x * 9 * 8 + c])); /* query row 0 */
    expect_reference(&s, &run, "rows 1.. of a mask with row 0 all -inf");
    release_run(&run);
}
END_TEST

START_TEST(softmax_with_another_user_keeps_the_unfused_path) {
    stax_test_cache_dir();
    attention_shape s = {2, 2, 30, 50, 16, 16, MASK_CAUSAL_INF, SCALE_SCORES_MUL};
    attention_run run;
    run_on_stax(&s, true, &run);
    ck_assert_int_eq(run.kernels.attention, 0);
    ck_assert_int_ge(run.kernels.softmax, 1);
    expect_reference(&s, &run, "unfused, softmax also returned");
    release_run(&run);
}
END_TEST

START_TEST(stax_attention_off_keeps_the_unfused_path) {
    stax_test_cache_dir();
    setenv("STAX_ATTENTION", "off", 1);
    attention_shape s = {2, 2, 30, 50, 16, 16, MASK_CAUSAL_INF, SCALE_SCORES_MUL};
    attention_run run;
    run_on_stax(&s, false, &run);
    unsetenv("STAX_ATTENTION");
    ck_assert_int_eq(run.kernels.attention, 0);
    ck_assert_int_ge(run.kernels.softmax, 1);
    expect_reference(&s, &run, "STAX_ATTENTION=off");
    release_run(&run);
}
END_TEST

START_TEST(a_misspelt_stax_attention_is_an_error_naming_the_values) {
    stax_test_cache_dir();
    setenv("STAX_ATTENTION", "of", 1);
    attention_shape s = {1, 1, 4, 4, 4, 4, MASK_NONE, SCALE_SCORES_MUL};
    tp_graph *g = attention_graph(&s, "f32", false);
    int64_t dims[4] = {1, 1, 4, 4};
    tp_tensor *in[3];
    for (int i = 0; i < 3; i++) in[i] = stax_test_random(TP_F32, 4, dims, (uint64_t)i);
    tp_tensor *out[1] = {NULL};
    tp_status status = stax_test_run("stax", g, in, 3, NULL, 0, out);
    unsetenv("STAX_ATTENTION");
    ck_assert_int_ne(status, TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "STAX_ATTENTION is 'of'") &&
                      strstr(tp_last_error(), "use on or off"),
                  "%s", tp_last_error());
    for (int i = 0; i < 3; i++) tp_tensor_release(in[i]);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(f64_attention_keeps_the_unfused_path) {
    stax_test_cache_dir();
    attention_shape s = {1, 2, 10, 12, 8, 8, MASK_NONE, SCALE_SCORES_MUL};
    tp_graph *g = attention_graph(&s, "f64", false);
    int64_t qd[4] = {1, 2, 10, 8}, kd[4] = {1, 2, 12, 8};
    tp_tensor *in[3] = {stax_test_random(TP_F64, 4, qd, 1), stax_test_random(TP_F64, 4, kd, 2),
                        stax_test_random(TP_F64, 4, kd, 3)};
    kernel_names seen = {0};
    tp_profile_set_handler(count_kernel, &seen);
    tp_tensor *out[1] = {NULL};
    ck_assert_int_eq(stax_test_run("stax", g, in, 3, NULL, 0, out), TP_OK);
    tp_profile_set_handler(NULL, NULL);
    ck_assert_int_eq(seen.attention, 0);
    ck_assert_int_ge(seen.softmax, 1);
    tp_tensor_release(out[0]);
    stax_test_compare(g, in, 3, stax_test_rtol(TP_F64), stax_test_atol(TP_F64), "f64 attention");
    for (int i = 0; i < 3; i++) tp_tensor_release(in[i]);
    tp_graph_destroy(g);
}
END_TEST

START_TEST(the_softmax_update_is_the_librarys_not_each_graphs) {
    stax_test_cache_dir();
    /* every size is an argument of the update kernel: it is compiled once
     * into the micro-kernel library (prebuilt), never into a graph's module */
    attention_shape s = {1, 2, 20, 40, 16, 16, MASK_CAUSAL_INF, SCALE_SCORES_MUL};
    int64_t qd[4] = {1, 2, 20, 16}, kd[4] = {1, 2, 40, 16};
    tp_tensor *inputs[4] = {stax_test_random(TP_F32, 4, qd, 21),
                            stax_test_random(TP_F32, 4, kd, 22),
                            stax_test_random(TP_F32, 4, kd, 23), make_mask(&s)};
    tp_graph *g = attention_graph(&s, "f32", false);
    char ir[4300], library_ir[4400], option[4400];
    snprintf(ir, sizeof ir, "%s/attention.ll", tp_test_temp_dir());
    snprintf(library_ir, sizeof library_ir, "%s/attention.gemm.ll", tp_test_temp_dir());
    snprintf(option, sizeof option, "dump_ir=%s", ir);
    const char *options[] = {option};
    attention_run run = {.num_inputs = 4};
    for (int i = 0; i < 4; i++) run.inputs[i] = inputs[i];
    tp_profile_set_handler(count_kernel, &run.kernels);
    tp_status status = stax_test_run("stax", g, run.inputs, 4, options, 1, run.outputs);
    tp_profile_set_handler(NULL, NULL);
    ck_assert_msg(status == TP_OK, "stax: %s", tp_last_error());
    ck_assert_msg(run.kernels.attention == 1, "kernels%s: not fused", run.kernels.names);
    expect_reference(&s, &run, "causal mask, the library's update kernel");
    /* "_NAME(": the name after the JIT's key prefix */
    ck_assert_int_eq(stax_test_ir_definitions(ir, "_attention_rows"), 0);
    ck_assert_int_eq(stax_test_ir_definitions(library_ir, "_attention_rows("), 1);
    ck_assert_int_eq(stax_test_ir_definitions(library_ir, "_attention_rows_masked("), 1);
    release_run(&run);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(stax_attention) {
    Suite *s = suite_create("stax_attention");
    TCase *c = tcase_create("attention");
    tcase_set_timeout(c, 300);
    tcase_add_test(c, keys_past_a_block_odd_head_dims_and_a_causal_mask_match_the_reference);
    tcase_add_test(c, encoder_shapes_with_scaled_operands_match_the_reference);
    tcase_add_test(c, gpt2_shapes_with_a_causal_mask_match_the_reference);
    tcase_add_test(c, a_padding_mask_broadcast_over_heads_and_rows_matches_the_reference);
    tcase_add_test(c, tiny_shapes_match_the_reference);
    tcase_add_test(c, every_micro_kernel_family_matches_the_reference);
    tcase_add_test(c, a_fully_masked_row_is_nan_as_unfused);
    tcase_add_test(c, softmax_with_another_user_keeps_the_unfused_path);
    tcase_add_test(c, stax_attention_off_keeps_the_unfused_path);
    tcase_add_test(c, a_misspelt_stax_attention_is_an_error_naming_the_values);
    tcase_add_test(c, f64_attention_keeps_the_unfused_path);
    tcase_add_test(c, the_softmax_update_is_the_librarys_not_each_graphs);
    suite_add_tcase(s, c);
    return s;
}
