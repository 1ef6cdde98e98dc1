/* NumPy oracle for every op of the op table.
 *
 * tests/oracle/gen_op_cases.py (run by the ctest fixture numpy_oracle_generate)
 * writes input and expected .npy files and a manifest into TP_ORACLE_DIR
 * (default TP_BUILD_DIR/oracle). One case per line:
 *
 *   CASE NAME op=OP dtype=D inputs=A.npy,B.npy|- expected=OUT.npy|-
 *        rtol=R atol=A attrs=KEY:VALUE;KEY:VALUE|- [expect_error=STATUS]
 *
 * (the generator's docstring describes every field). Each case runs twice:
 * eagerly through tp_op on a fresh tp_ctx, and as a one-node graph through
 * tp_graph_run. A result passes when it has the expected dtype and shape, NaN
 * where NumPy has NaN, equal infinities, equal integers, and finite floats
 * within atol + rtol * |expected|. Cases with expect_error must fail with that
 * status (tp_status_name, '_' for ' '; "any" = any failure) and a message
 * naming the op.
 *
 * Each op is one iteration of a loop test, so a crash in one kernel only
 * fails that op; inside an op every failing case is printed (name, op,
 * dtype, first bad index, expected and got) before the op fails once with a
 * summary. A last test checks that every op of the table has a passing-type
 * case for every dtype its shape/dtype rule accepts, and a rejected-dtype
 * case where the rule rejects one, so a new op without oracle coverage fails.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/attr_info.h"
#include "ops/op_table.h"
#include "tensorplay/graph.h"
#include "tensorplay/ops.h"
#include "tp_test.h"

#define ORACLE_MAX_INPUTS 64
#define ORACLE_REPORT_MAX 4096

typedef struct oracle_case {
    char *line; /* owned; the fields below point into it */
    const char *name, *op, *dtype, *expected, *attrs, *expect_error;
    const char *inputs[ORACLE_MAX_INPUTS];
    int num_inputs;
    double rtol, atol;
} oracle_case;

typedef struct oracle_manifest {
    char dir[1024];
    oracle_case *cases;
    int count;
    char error[4096]; /* why the manifest could not be read; "" when it was */
} oracle_manifest;

static oracle_manifest manifest;

/* ---- manifest ---------------------------------------------------------- */

static int split_inputs(oracle_case *c, char *list) {
    if (strcmp(list, "-") == 0) return 0;
    char *save = NULL;
    for (char *file = strtok_r(list, ",", &save); file; file = strtok_r(NULL, ",", &save)) {
        if (c->num_inputs == ORACLE_MAX_INPUTS) return -1;
        c->inputs[c->num_inputs++] = file;
    }
    return 0;
}

static int parse_case(char *line, oracle_case *c) {
    memset(c, 0, sizeof *c);
    c->line = line;
    char *save = NULL;
    char *word = strtok_r(line, " \t\r\n", &save);
    if (!word || strcmp(word, "CASE") != 0) return -1;
    c->name = strtok_r(NULL, " \t\r\n", &save);
    if (!c->name) return -1;
    while ((word = strtok_r(NULL, " \t\r\n", &save))) {
        char *value = strchr(word, '=');
        if (!value) return -1;
        *value++ = '\0';
        if (strcmp(word, "op") == 0)
            c->op = value;
        else if (strcmp(word, "dtype") == 0)
            c->dtype = value;
        else if (strcmp(word, "inputs") == 0) {
            if (split_inputs(c, value) != 0) return -1;
        } else if (strcmp(word, "expected") == 0)
            c->expected = value;
        else if (strcmp(word, "rtol") == 0)
            c->rtol = strtod(value, NULL);
        else if (strcmp(word, "atol") == 0)
            c->atol = strtod(value, NULL);
        else if (strcmp(word, "attrs") == 0)
            c->attrs = value;
        else if (strcmp(word, "expect_error") == 0)
            c->expect_error = value;
        else
            return -1;
    }
    return c->op && c->dtype && c->expected && c->attrs ? 0 : -1;
}

static void manifest_load(void) {
    const char *dir = getenv("TP_ORACLE_DIR");
    if (dir && *dir)
        snprintf(manifest.dir, sizeof manifest.dir, "%s", dir);
    else
        snprintf(manifest.dir, sizeof manifest.dir, "%s/oracle", tp_test_build_dir());
    char path[1280];
    snprintf(path, sizeof path, "%s/manifest.txt", manifest.dir);
    FILE *file = fopen(path, "r");
    if (!file) {
        snprintf(manifest.error, sizeof manifest.error,
                 "cannot open %s: run ctest (test numpy_oracle_generate) or "
                 "/usr/bin/python3 tests/oracle/gen_op_cases.py %s",
                 path, manifest.dir);
        return;
    }
    char buffer[8192];
    int capacity = 0, line_number = 0;
    while (fgets(buffer, sizeof buffer, file)) {
        line_number++;
        if (buffer[0] == '#' || buffer[0] == '\n') continue;
        if (manifest.count == capacity) {
            capacity = capacity ? capacity * 2 : 256;
            manifest.cases = realloc(manifest.cases, (size_t)capacity * sizeof *manifest.cases);
        }
        oracle_case *c = &manifest.cases[manifest.count];
        if (parse_case(strdup(buffer), c) != 0) {
            free(c->line);
            snprintf(manifest.error, sizeof manifest.error, "%s:%d: malformed case line", path,
                     line_number);
            break;
        }
        manifest.count++;
    }
    fclose(file);
}

static void manifest_free(void) {
    for (int i = 0; i < manifest.count; i++) free(manifest.cases[i].line);
    free(manifest.cases);
    memset(&manifest, 0, sizeof manifest);
}

/* ---- attributes -------------------------------------------------------- */

static int parse_ints(const char *text, int64_t *values, int32_t *count) {
    *count = 0;
    if (*text++ != '[') return -1;
    while (*text && *text != ']') {
        if (*count == TP_MAX_DIMS) return -1;
        char *end;
        values[(*count)++] = strtoll(text, &end, 10);
        if (end == text) return -1;
        text = *end == ',' ? end + 1 : end;
    }
    return *text == ']' ? 0 : -1;
}

static int parse_int(const char *text, int64_t *out) {
    if (strcmp(text, "end") == 0) {
        *out = TP_SLICE_END;
        return 0;
    }
    char *end;
    *out = strtoll(text, &end, 10);
    return *text && !*end ? 0 : -1;
}

static int parse_double(const char *text, double *out) {
    char *end;
    *out = strtod(text, &end);
    return *text && !*end ? 0 : -1;
}

/* An attribute of the keys after `data` (pad, clip, topk, cumsum, resize),
 * found by its .tpir name and written through the per-key accessors. */
static int parse_keyed_attr(const char *key, const char *value, tp_attrs *attrs) {
    for (int k = TP_ATTR_DATA + 1; k < TP_ATTR_KEY_COUNT; k++) {
        const tp_attr_info *info = tp_attr_info_get((tp_attr_key)k);
        if (strcmp(info->name, key) != 0) continue;
        int32_t *count = NULL;
        switch (info->type) {
        case TP_ATTR_TYPE_INTS: {
            int64_t *values = tp_attrs_ints_mut(attrs, (tp_attr_key)k, &count);
            int32_t parsed = 0;
            int rc = parse_ints(value, values, &parsed);
            *count = parsed;
            return rc;
        }
        case TP_ATTR_TYPE_INT:
            return parse_int(value, tp_attrs_int_field(attrs, (tp_attr_key)k));
        case TP_ATTR_TYPE_FLOAT:
            return parse_double(value, tp_attrs_float_field(attrs, (tp_attr_key)k));
        case TP_ATTR_TYPE_BOOL:
            *tp_attrs_bool_field(attrs, (tp_attr_key)k) = strcmp(value, "1") == 0;
            return 0;
        case TP_ATTR_TYPE_ENUM: {
            int code = tp_attr_enum_code((tp_attr_key)k, value, strlen(value));
            if (code < 0) return -1;
            tp_attrs_enum_set(attrs, (tp_attr_key)k, code);
            return 0;
        }
        default:
            return -1;
        }
    }
    return -1;
}

/* Fills *attrs from "key:value;key:value"; a `data` payload is loaded into
 * *data (the caller releases it). Returns 0, or -1 with `why` filled. */
static int attrs_from_text(const char *text, tp_attrs *attrs, tp_tensor **data, char *why,
                           size_t why_size) {
    static const tp_attrs defaults = TP_ATTRS_INIT;
    *attrs = defaults;
    *data = NULL;
    if (strcmp(text, "-") == 0) return 0;
    char *copy = strdup(text), *save = NULL;
    int result = 0;
    for (char *item = strtok_r(copy, ";", &save); item && result == 0;
         item = strtok_r(NULL, ";", &save)) {
        char *value = strchr(item, ':');
        if (!value) {
            result = -1;
            break;
        }
        *value++ = '\0';
        const char *key = item;
        int rc = 0;
        if (strcmp(key, "axes") == 0)
            rc = parse_ints(value, attrs->axes, &attrs->naxes);
        else if (strcmp(key, "shape") == 0)
            rc = parse_ints(value, attrs->shape, &attrs->shape_ndim);
        else if (strcmp(key, "perm") == 0)
            rc = parse_ints(value, attrs->perm, &attrs->nperm);
        else if (strcmp(key, "keepdim") == 0)
            attrs->keepdim = strcmp(value, "1") == 0;
        else if (strcmp(key, "kernel_shape") == 0)
            rc = parse_ints(value, attrs->kernel_shape, &attrs->nkernel_shape);
        else if (strcmp(key, "strides") == 0)
            rc = parse_ints(value, attrs->strides, &attrs->nstrides);
        else if (strcmp(key, "pads") == 0)
            rc = parse_ints(value, attrs->pads, &attrs->npads);
        else if (strcmp(key, "dilations") == 0)
            rc = parse_ints(value, attrs->dilations, &attrs->ndilations);
        else if (strcmp(key, "output_padding") == 0)
            rc = parse_ints(value, attrs->output_padding, &attrs->noutput_padding);
        else if (strcmp(key, "group") == 0)
            rc = parse_int(value, &attrs->group);
        else if (strcmp(key, "ceil_mode") == 0)
            attrs->ceil_mode = strcmp(value, "1") == 0;
        else if (strcmp(key, "count_include_pad") == 0)
            attrs->count_include_pad = strcmp(value, "1") == 0;
        else if (strcmp(key, "axis") == 0)
            rc = parse_int(value, &attrs->axis);
        else if (strcmp(key, "dim0") == 0)
            rc = parse_int(value, &attrs->dim0);
        else if (strcmp(key, "dim1") == 0)
            rc = parse_int(value, &attrs->dim1);
        else if (strcmp(key, "start") == 0)
            rc = parse_int(value, &attrs->start);
        else if (strcmp(key, "stop") == 0)
            rc = parse_int(value, &attrs->stop);
        else if (strcmp(key, "step") == 0)
            rc = parse_int(value, &attrs->step);
        else if (strcmp(key, "range_start") == 0)
            rc = parse_double(value, &attrs->range_start);
        else if (strcmp(key, "range_stop") == 0)
            rc = parse_double(value, &attrs->range_stop);
        else if (strcmp(key, "range_step") == 0)
            rc = parse_double(value, &attrs->range_step);
        else if (strcmp(key, "value") == 0)
            rc = parse_double(value, &attrs->value);
        else if (strcmp(key, "eps") == 0)
            rc = parse_double(value, &attrs->eps);
        else if (strcmp(key, "beta") == 0)
            rc = parse_double(value, &attrs->beta);
        else if (strcmp(key, "threshold") == 0)
            rc = parse_double(value, &attrs->threshold);
        else if (strcmp(key, "dtype") == 0)
            rc = tp_dtype_from_name(value, &attrs->dtype) == TP_OK ? 0 : -1;
        else if (strcmp(key, "approximate") == 0) {
            if (strcmp(value, "none") == 0)
                attrs->approximate = TP_GELU_NONE;
            else if (strcmp(value, "tanh") == 0)
                attrs->approximate = TP_GELU_TANH;
            else
                rc = -1;
        } else if (strcmp(key, "data") == 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", manifest.dir, value);
            if (tp_npy_load(path, data) != TP_OK) {
                snprintf(why, why_size, "cannot load %.1000s: %.1000s", path, tp_last_error());
                result = -1;
                break;
            }
            attrs->data = *data;
        } else
            rc = parse_keyed_attr(key, value, attrs);
        if (rc != 0) {
            snprintf(why, why_size, "bad attribute %s:%s", key, value);
            result = -1;
        }
    }
    free(copy);
    return result;
}

/* ---- loading and comparing ----------------------------------------------- */

/* Everything one case needs; released by case_data_release. */
typedef struct case_data {
    tp_tensor *inputs[ORACLE_MAX_INPUTS];
    int num_inputs;
    tp_tensor *expected;
    tp_tensor *payload; /* constant's data */
    tp_attrs attrs;
} case_data;

static void case_data_release(case_data *data) {
    for (int i = 0; i < data->num_inputs; i++) tp_tensor_release(data->inputs[i]);
    tp_tensor_release(data->expected);
    tp_tensor_release(data->payload);
    memset(data, 0, sizeof *data);
}

static int load_npy(const char *file, tp_tensor **out, char *why, size_t why_size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", manifest.dir, file);
    if (tp_npy_load(path, out) == TP_OK) return 0;
    snprintf(why, why_size, "cannot load %.1000s: %.1000s", path, tp_last_error());
    *out = NULL;
    return -1;
}

static int case_data_load(const oracle_case *c, case_data *data, char *why, size_t why_size) {
    memset(data, 0, sizeof *data);
    if (attrs_from_text(c->attrs, &data->attrs, &data->payload, why, why_size) != 0) return -1;
    for (int i = 0; i < c->num_inputs; i++) {
        if (load_npy(c->inputs[i], &data->inputs[i], why, why_size) != 0) return -1;
        data->num_inputs++;
    }
    if (strcmp(c->expected, "-") != 0 && load_npy(c->expected, &data->expected, why, why_size) != 0)
        return -1;
    return 0;
}

static void describe_index(const tp_tensor *t, int64_t flat, char *buf, size_t size) {
    int ndim = tp_tensor_ndim(t);
    const int64_t *shape = tp_tensor_shape(t);
    int64_t index[TP_MAX_DIMS];
    for (int d = ndim - 1; d >= 0; d--) {
        index[d] = shape[d] ? flat % shape[d] : 0;
        flat = shape[d] ? flat / shape[d] : 0;
    }
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < ndim && used < size; d++)
        used +=
            (size_t)snprintf(buf + used, size - used, "%s%lld", d ? ", " : "", (long long)index[d]);
    if (used < size) snprintf(buf + used, size - used, "]");
}

static int64_t element_int(const tp_tensor *t, int64_t i) {
    const void *data = tp_tensor_data(t);
    switch (tp_tensor_dtype(t)) {
    case TP_I32:
        return ((const int32_t *)data)[i];
    case TP_I64:
        return ((const int64_t *)data)[i];
    case TP_BOOL:
        return ((const uint8_t *)data)[i];
    default:
        return 0;
    }
}

static double element_float(const tp_tensor *t, int64_t i) {
    const void *data = tp_tensor_data(t);
    switch (tp_tensor_dtype(t)) {
    case TP_F32:
        return ((const float *)data)[i];
    case TP_F16:
        return tp_f16_to_f32(((const uint16_t *)data)[i]);
    case TP_BF16:
        return tp_bf16_to_f32(((const uint16_t *)data)[i]);
    default:
        return ((const double *)data)[i];
    }
}

static bool float_close(double got, double want, double rtol, double atol) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    if (!isfinite(got)) return false;
    return fabs(got - want) <= atol + rtol * fabs(want);
}

/* 0 when `got` matches `want`; otherwise -1 and `why` says where. */
static int compare_tensors(const tp_tensor *got, const tp_tensor *want, double rtol, double atol,
                           char *why, size_t why_size) {
    char got_text[128], want_text[128];
    tp_tensor_describe(got, got_text, sizeof got_text);
    tp_tensor_describe(want, want_text, sizeof want_text);
    bool same_shape = tp_tensor_ndim(got) == tp_tensor_ndim(want);
    for (int d = 0; same_shape && d < tp_tensor_ndim(want); d++)
        same_shape = tp_tensor_shape(got)[d] == tp_tensor_shape(want)[d];
    if (tp_tensor_dtype(got) != tp_tensor_dtype(want) || !same_shape) {
        snprintf(why, why_size, "result is %s, NumPy gives %s", got_text, want_text);
        return -1;
    }
    bool is_float = tp_dtype_is_float(tp_tensor_dtype(want));
    int64_t numel = tp_tensor_numel(want), bad = 0, first = -1;
    for (int64_t i = 0; i < numel; i++) {
        bool ok = is_float ? float_close(element_float(got, i), element_float(want, i), rtol, atol)
                           : element_int(got, i) == element_int(want, i);
        if (!ok && bad++ == 0) first = i;
    }
    if (!bad) return 0;
    char index[160];
    describe_index(want, first, index, sizeof index);
    if (is_float)
        snprintf(why, why_size,
                 "%s: %lld of %lld elements differ; first at %s: expected %.17g, got %.17g "
                 "(rtol %g, atol %g)",
                 want_text, (long long)bad, (long long)numel, index, element_float(want, first),
                 element_float(got, first), rtol, atol);
    else
        snprintf(why, why_size,
                 "%s: %lld of %lld elements differ; first at %s: expected %lld, got %lld",
                 want_text, (long long)bad, (long long)numel, index,
                 (long long)element_int(want, first), (long long)element_int(got, first));
    return -1;
}

/* Checks a failure against the case's expect_error. */
static int check_expected_error(const oracle_case *c, tp_status status, const char *message,
                                char *why, size_t why_size) {
    char wanted[64];
    snprintf(wanted, sizeof wanted, "%s", c->expect_error);
    for (char *p = wanted; *p; p++)
        if (*p == '_') *p = ' ';
    if (strcmp(wanted, "any") != 0 && strcmp(wanted, tp_status_name(status)) != 0) {
        snprintf(why, why_size, "failed with status '%s' (%s), expected '%s'",
                 tp_status_name(status), message, wanted);
        return -1;
    }
    if (!strstr(message, c->op)) {
        snprintf(why, why_size, "error message does not name the op: \"%s\"", message);
        return -1;
    }
    return 0;
}

/* ---- the two ways of running a case --------------------------------------- */

typedef enum oracle_mode { ORACLE_EAGER, ORACLE_GRAPH } oracle_mode;

/* Runs one op; on success *result is a new reference. On failure returns the
 * status and copies the message into `message`. */
static tp_status run_eager(const oracle_case *c, case_data *data, tp_tensor **result, char *message,
                           size_t message_size) {
    tp_ctx *ctx = tp_ctx_create();
    if (!ctx) {
        snprintf(message, message_size, "tp_ctx_create failed");
        return TP_ERR_OUT_OF_MEMORY;
    }
    tp_tensor *out = tp_op(ctx, c->op, data->inputs, data->num_inputs, &data->attrs);
    tp_status status = TP_OK;
    if (out) {
        *result = tp_tensor_retain(out);
    } else {
        status = tp_ctx_status(ctx);
        snprintf(message, message_size, "%s", tp_ctx_error(ctx));
        if (status == TP_OK) {
            status = TP_ERR_INTERNAL;
            snprintf(message, message_size, "tp_op returned NULL but the ctx holds no error");
        }
    }
    tp_ctx_destroy(ctx);
    return status;
}

static tp_status run_graph(const oracle_case *c, case_data *data, tp_tensor **result, char *message,
                           size_t message_size) {
    tp_graph *graph = NULL;
    tp_value_id ids[ORACLE_MAX_INPUTS], out_id = TP_NO_VALUE;
    tp_status status = tp_graph_create("oracle", &graph);
    for (int i = 0; status == TP_OK && i < data->num_inputs; i++) {
        tp_type type = {.dtype = tp_tensor_dtype(data->inputs[i]),
                        .ndim = tp_tensor_ndim(data->inputs[i])};
        memcpy(type.dims, tp_tensor_shape(data->inputs[i]), (size_t)type.ndim * sizeof(int64_t));
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        status = tp_graph_add_input(graph, name, &type, &ids[i]);
    }
    if (status == TP_OK)
        status =
            tp_graph_add_node(graph, c->op, ids, data->num_inputs, &data->attrs, NULL, &out_id);
    if (status == TP_OK) status = tp_graph_set_outputs(graph, &out_id, 1);
    if (status == TP_OK) status = tp_graph_run(graph, data->inputs, data->num_inputs, result);
    if (status != TP_OK) snprintf(message, message_size, "%s", tp_last_error());
    tp_graph_destroy(graph);
    return status;
}

/* 0 when the case passes; otherwise -1 with `why`. */
static int run_case(const oracle_case *c, oracle_mode mode, char *why, size_t why_size) {
    case_data data;
    if (case_data_load(c, &data, why, why_size) != 0) {
        case_data_release(&data);
        return -1;
    }
    tp_tensor *result = NULL;
    char message[2048] = "";
    tp_clear_error();
    tp_status status = mode == ORACLE_EAGER ? run_eager(c, &data, &result, message, sizeof message)
                                            : run_graph(c, &data, &result, message, sizeof message);
    int rc;
    if (c->expect_error) {
        if (status == TP_OK) {
            char text[128];
            snprintf(why, why_size, "succeeded with %s, expected a '%s' error",
                     tp_tensor_describe(result, text, sizeof text), c->expect_error);
            rc = -1;
        } else {
            rc = check_expected_error(c, status, message, why, why_size);
        }
    } else if (status != TP_OK) {
        snprintf(why, why_size, "failed (%s): %s", tp_status_name(status), message);
        rc = -1;
    } else {
        rc = compare_tensors(result, data.expected, c->rtol, c->atol, why, why_size);
    }
    tp_tensor_release(result);
    case_data_release(&data);
    return rc;
}

/* Runs every case of op `op_index`; prints each failure, fails once. */
static void run_op_cases(int op_index, oracle_mode mode) {
    ck_assert_msg(manifest.error[0] == '\0', "%s", manifest.error);
    const char *op = tp_op_table[op_index].name;
    const char *mode_name = mode == ORACLE_EAGER ? "eager" : "graph";
    int total = 0, failed = 0;
    char first_failure[ORACLE_REPORT_MAX] = "";
    for (int i = 0; i < manifest.count; i++) {
        const oracle_case *c = &manifest.cases[i];
        if (strcmp(c->op, op) != 0) continue;
        total++;
        char why[ORACLE_REPORT_MAX];
        if (run_case(c, mode, why, sizeof why) == 0) continue;
        failed++;
        fprintf(stderr, "numpy oracle [%s] FAIL %s (op %s, dtype %s): %s\n", mode_name, c->name,
                c->op, c->dtype, why);
        if (!first_failure[0])
            snprintf(first_failure, sizeof first_failure, "%.200s: %.3800s", c->name, why);
    }
    ck_assert_msg(total > 0, "op %s has no case in %s/manifest.txt", op, manifest.dir);
    ck_assert_msg(failed == 0, "[%s] %s: %d of %d cases disagree with NumPy; first: %s", mode_name,
                  op, failed, total, first_failure);
}

START_TEST(eager_op_matches_numpy) {
    run_op_cases(_i, ORACLE_EAGER);
}
END_TEST

START_TEST(graph_op_matches_numpy) {
    run_op_cases(_i, ORACLE_GRAPH);
}
END_TEST

/* ---- coverage ------------------------------------------------------------ */

/* Whether the op's shape/dtype rule accepts `dtype` for all of its tensor
 * inputs (or as its created dtype): only TP_ERR_DTYPE counts as a rejection,
 * so an op whose rule is missing or fails otherwise must be covered. */
static bool op_accepts_dtype(const tp_op_def *op, tp_dtype dtype) {
    tp_attrs attrs = TP_ATTRS_INIT;
    tp_type inputs[64]; /* min_arity of any op (batch_norm: 5) */
    int count = op->min_arity;
    for (int i = 0; i < count; i++)
        inputs[i] = (tp_type){.dtype = dtype, .ndim = 2, .dims = {2, 2}};
    attrs.dtype = op->kind == TP_KIND_CREATION ? dtype : TP_F32;
    attrs.shape_ndim = 2;
    attrs.shape[0] = attrs.shape[1] = 2;
    attrs.nperm = 2;
    attrs.perm[1] = 1;
    attrs.dim1 = 1;
    attrs.range_stop = 2.0;
    tp_tensor *payload = NULL;
    if (op->id == TP_OP_CONSTANT) {
        int64_t shape[1] = {2};
        if (tp_tensor_create(dtype, 1, shape, &payload) != TP_OK) return true;
        attrs.data = payload;
    }
    if (op->id == TP_OP_RESHAPE) attrs.shape_ndim = 1, attrs.shape[0] = 4;
    tp_type out;
    tp_status status = tp_op_infer(op, inputs, count, &attrs, &out);
    tp_tensor_release(payload);
    return status != TP_ERR_DTYPE;
}

static bool manifest_has(const char *op, const char *dtype, bool want_error) {
    for (int i = 0; i < manifest.count; i++) {
        const oracle_case *c = &manifest.cases[i];
        if (strcmp(c->op, op) != 0 || strcmp(c->dtype, dtype) != 0) continue;
        if (!want_error && !c->expect_error) return true;
        if (want_error && c->expect_error && strcmp(c->expect_error, "dtype") == 0) return true;
    }
    return false;
}

START_TEST(every_op_is_covered_for_every_dtype_it_accepts) {
    ck_assert_msg(manifest.error[0] == '\0', "%s", manifest.error);
    int missing = 0;
    char first[512] = "";
    for (int i = 0; i < TP_OP_COUNT; i++) {
        const tp_op_def *op = &tp_op_table[i];
        bool rejects_some = false, has_rejected_case = false;
        for (int d = 0; d < TP_DTYPE_COUNT; d++) {
            const char *dtype = tp_dtype_name((tp_dtype)d);
            if (!op_accepts_dtype(op, (tp_dtype)d)) {
                rejects_some = true;
                has_rejected_case |= manifest_has(op->name, dtype, true);
                continue;
            }
            if (manifest_has(op->name, dtype, false)) continue;
            missing++;
            fprintf(stderr, "numpy oracle: op %s accepts %s but has no %s case\n", op->name, dtype,
                    dtype);
            if (!first[0]) snprintf(first, sizeof first, "%s has no %s case", op->name, dtype);
        }
        if (rejects_some && !has_rejected_case) {
            missing++;
            fprintf(stderr,
                    "numpy oracle: op %s rejects a dtype but has no expect_error=dtype case\n",
                    op->name);
            if (!first[0]) snprintf(first, sizeof first, "%s has no rejected-dtype case", op->name);
        }
    }
    ck_assert_msg(missing == 0, "%d op/dtype pairs lack oracle coverage; first: %s", missing,
                  first);
}
END_TEST

START_TEST(every_manifest_op_is_in_the_op_table) {
    ck_assert_msg(manifest.error[0] == '\0', "%s", manifest.error);
    for (int i = 0; i < manifest.count; i++)
        ck_assert_msg(tp_op_find(manifest.cases[i].op) != NULL, "case %s names unknown op '%s'",
                      manifest.cases[i].name, manifest.cases[i].op);
}
END_TEST

TP_TEST_SUITE(numpy_oracle) {
    Suite *suite = suite_create("numpy.oracle");
    TCase *coverage = tcase_create("coverage");
    tcase_add_unchecked_fixture(coverage, manifest_load, manifest_free);
    tcase_add_test(coverage, every_manifest_op_is_in_the_op_table);
    tcase_add_test(coverage, every_op_is_covered_for_every_dtype_it_accepts);
    suite_add_tcase(suite, coverage);
    TCase *eager = tcase_create("eager");
    tcase_add_unchecked_fixture(eager, manifest_load, manifest_free);
    tcase_add_loop_test(eager, eager_op_matches_numpy, 0, TP_OP_COUNT);
    suite_add_tcase(suite, eager);
    TCase *graph = tcase_create("graph");
    tcase_add_unchecked_fixture(graph, manifest_load, manifest_free);
    tcase_add_loop_test(graph, graph_op_matches_numpy, 0, TP_OP_COUNT);
    suite_add_tcase(suite, graph);
    return suite;
}
