/* A seeded property: random functions (op sequences from a safe part of the
 * op table, gates on data through tp_item_* choosing a branch, raw reads
 * where the wrapper may run uncompiled) give the same results compiled and
 * eager over many input changes (new values; new row counts in dynamic
 * mode), on every available backend (eager, stax, opencl, cuda). The oracle is the eager run of the
 * same function on the same inputs. Every value the function reads while it is captured must also
 * be, bit for bit, what the eager run read.
 *
 * TP_PROPERTY_SEED=N reruns one seed (every failure message names it);
 * TP_PROPERTY_FUNCTIONS=N sets how many functions per backend (opencl runs a
 * quarter of them: PoCL compiles are slow). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_fixtures.h"
#include "tensorplay/ops.h"

enum { MAX_STEPS = 14, MAX_VALUES = MAX_STEPS + 2, MAX_READS = 64, COLS = 4 };

typedef enum step_kind {
    STEP_UNARY,     /* op(a) */
    STEP_EXP_TANH,  /* exp(tanh(a)) */
    STEP_BINARY,    /* op(a, b) */
    STEP_MATMUL,    /* tanh(a @ w) */
    STEP_SOFTMAX,   /* softmax(a, -1) */
    STEP_NORM,      /* layer_norm(a, -1) */
    STEP_CENTER,    /* a - mean(a, axis 1, keepdim) */
    STEP_WHERE,     /* where(a > b, a, b) */
    STEP_SCALE,     /* a * constant */
    STEP_GATE_F64,  /* item_f64(sum(a)) > constant ? a + b : a - b */
    STEP_GATE_BOOL, /* item_bool(max(a) > constant) ? a * b : maximum(a, b) */
    STEP_RAW_READ,  /* a * tanh(get_f64(b, 0)) */
    STEP_KIND_COUNT
} step_kind;

typedef struct step {
    step_kind kind;
    int op; /* index into unary_ops / binary_ops */
    int a, b;
    double constant;
} step;

typedef struct program {
    step steps[MAX_STEPS];
    int num_steps;
    /* What the function read (gates and raw reads), in order, per run. */
    double reads[MAX_READS];
    int num_reads;
} program;

static const char *const unary_ops[] = {"neg", "abs", "tanh", "sigmoid", "relu", "sin", "cos"};
static const char *const binary_ops[] = {"add", "sub", "mul", "maximum", "minimum"};

/* xorshift32: the whole test follows from one seed. */
static uint32_t next_random(uint32_t *state) {
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

static int random_below(uint32_t *state, int n) {
    return (int)(next_random(state) % (uint32_t)n);
}

static double random_unit(uint32_t *state) { /* [-1, 1) */
    return (double)(next_random(state) >> 8) / (double)(1u << 23) - 1.0;
}

static void make_program(uint32_t *state, bool raw_reads, program *p) {
    memset(p, 0, sizeof *p);
    p->num_steps = 3 + random_below(state, MAX_STEPS - 2);
    for (int i = 0; i < p->num_steps; i++) {
        step *s = &p->steps[i];
        do s->kind = (step_kind)random_below(state, STEP_KIND_COUNT);
        while (s->kind == STEP_RAW_READ && !raw_reads);
        s->op = random_below(state, s->kind == STEP_UNARY ? 7 : 5);
        /* operands: x (value 0) or an earlier step's result (2 + j); w is
         * value 1, read only by matmul */
        int choices = 1 + i;
        s->a = random_below(state, choices);
        s->b = random_below(state, choices);
        s->a = s->a == 0 ? 0 : s->a + 1;
        s->b = s->b == 0 ? 0 : s->b + 1;
        s->constant = s->kind == STEP_GATE_BOOL ? 0.5 * random_unit(state) + 0.5
                      : s->kind == STEP_SCALE   ? 2.0 * random_unit(state)
                                                : 0.5 * random_unit(state);
    }
}

static void describe_program(const program *p, char *text, size_t size) {
    static const char *const names[] = {"unary",   "exp_tanh", "binary",    "matmul",
                                        "softmax", "norm",     "center",    "where",
                                        "scale",   "gate_f64", "gate_bool", "raw_read"};
    size_t used = 0;
    for (int i = 0; i < p->num_steps && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, "%s%%%d=%s(%%%d,%%%d)", i ? " " : "",
                                 i + 2, names[p->steps[i].kind], p->steps[i].a, p->steps[i].b);
}

static void note_read(program *p, double value) {
    if (p->num_reads < MAX_READS) p->reads[p->num_reads++] = value;
}

static tp_tensor *run_step(tp_ctx *ctx, program *p, const step *s, tp_tensor *const *values) {
    tp_tensor *a = values[s->a], *b = values[s->b], *w = values[1];
    tp_tensor *inputs[2] = {a, b};
    switch (s->kind) {
    case STEP_UNARY:
        return tp_op(ctx, unary_ops[s->op], &a, 1, NULL);
    case STEP_EXP_TANH:
        return tp_exp(ctx, tp_tanh(ctx, a));
    case STEP_BINARY:
        return tp_op(ctx, binary_ops[s->op], inputs, 2, NULL);
    case STEP_MATMUL:
        return tp_tanh(ctx, tp_matmul(ctx, a, w));
    case STEP_SOFTMAX:
        return tp_softmax(ctx, a, -1);
    case STEP_NORM:
        return tp_layer_norm(ctx, a, NULL, NULL, -1, 1e-5);
    case STEP_CENTER:
        return tp_sub(ctx, a, tp_mean(ctx, a, (int64_t[]){1}, 1, true));
    case STEP_WHERE:
        return tp_where(ctx, tp_gt(ctx, a, b), a, b);
    case STEP_SCALE:
        return tp_mul(ctx, a, tp_scalar(ctx, TP_F32, s->constant));
    case STEP_GATE_F64: {
        double sum = tp_item_f64(ctx, tp_sum(ctx, a, NULL, 0, false));
        note_read(p, sum);
        return sum > s->constant ? tp_add(ctx, a, b) : tp_sub(ctx, a, b);
    }
    case STEP_GATE_BOOL: {
        tp_tensor *peak = tp_max(ctx, a, NULL, 0, false);
        bool high = tp_item_bool(ctx, tp_gt(ctx, peak, tp_scalar(ctx, TP_F32, s->constant)));
        note_read(p, high);
        return high ? tp_mul(ctx, a, b) : tp_maximum(ctx, a, b);
    }
    case STEP_RAW_READ: {
        double first = tp_tensor_get_f64(b, 0);
        note_read(p, first);
        return tp_mul(ctx, a, tp_scalar(ctx, TP_F32, tanh(first)));
    }
    case STEP_KIND_COUNT:
        break;
    }
    return NULL;
}

static void program_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                       int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs;
    program *p = user_data;
    tp_tensor *values[MAX_VALUES] = {args[0].tensor, args[1].tensor};
    for (int i = 0; i < p->num_steps; i++) values[i + 2] = run_step(ctx, p, &p->steps[i], values);
    outputs[0] = values[p->num_steps + 1];
}

/* Fresh inputs: x [rows, COLS] in [-1, 1), w [COLS, COLS] in [-0.5, 0.5). */
static void make_inputs(uint32_t *state, int64_t rows, tp_tensor **x, tp_tensor **w) {
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, (int64_t[]){rows, COLS}, x), TP_OK);
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, (int64_t[]){COLS, COLS}, w), TP_OK);
    float *xd = tp_tensor_data_mut(*x), *wd = tp_tensor_data_mut(*w);
    for (int64_t i = 0; i < rows * COLS; i++) xd[i] = (float)random_unit(state);
    for (int64_t i = 0; i < COLS * COLS; i++) wd[i] = (float)(0.5 * random_unit(state));
}

/* The oracle: the function run eagerly on its own ctx. */
static tp_tensor *run_eagerly(program *p, tp_tensor *x, tp_tensor *w, const char *context) {
    tp_ctx *ctx = tp_ctx_create();
    tp_arg args[2] = {tp_arg_tensor(x), tp_arg_tensor(w)};
    tp_tensor *output = NULL;
    program_fn(ctx, args, 2, &output, 1, p);
    ck_assert_msg(output && tp_ctx_status(ctx) == TP_OK, "%s: eager run failed: %s", context,
                  tp_ctx_error(ctx));
    tp_tensor *kept = tp_tensor_retain(output);
    tp_ctx_destroy(ctx);
    return kept;
}

static void assert_close(const tp_tensor *got, const tp_tensor *want, const char *context) {
    ck_assert_msg(tp_tensor_numel(got) == tp_tensor_numel(want), "%s: %lld elements, want %lld",
                  context, (long long)tp_tensor_numel(got), (long long)tp_tensor_numel(want));
    const float *g = fixture_floats(got), *e = fixture_floats(want);
    for (int64_t i = 0; i < tp_tensor_numel(want); i++) {
        bool same = g[i] == e[i] || (isnan(g[i]) && isnan(e[i])); /* also infinities */
        ck_assert_msg(same || fabsf(g[i] - e[i]) <= 1e-4f + 1e-3f * fabsf(e[i]),
                      "%s: element %lld is %.7g compiled, %.7g eager", context, (long long)i,
                      (double)g[i], (double)e[i]);
    }
}

/* A compiled call reads nothing (a hit), or what eager read (a capture, or
 * an uncompiled run), or that twice (a capture refused by a raw read, then
 * the uncompiled run). */
static void assert_same_reads(const double *eager, int num_eager, const program *p,
                              const char *context) {
    int n = p->num_reads;
    ck_assert_msg(n == 0 || n == num_eager || n == 2 * num_eager,
                  "%s: the compiled call read %d values, eager %d", context, n, num_eager);
    for (int i = 0; i < n; i++) {
        double want = eager[i % (num_eager ? num_eager : 1)];
        ck_assert_msg(memcmp(&p->reads[i], &want, sizeof want) == 0,
                      "%s: read %d was %.17g in the capture, %.17g eager", context, i, p->reads[i],
                      want);
    }
}

typedef struct trial {
    const char *backend;
    uint32_t seed;
    bool dynamic, fullgraph;
} trial;

static void run_trial(const trial *t, int calls) {
    uint32_t state = t->seed ? t->seed : 1;
    program p;
    make_program(&state, !t->fullgraph, &p);
    char description[1024], context[1400];
    describe_program(&p, description, sizeof description);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = t->backend;
    options.dynamic = t->dynamic ? TP_DYNAMIC_DYNAMIC : TP_DYNAMIC_STATIC;
    options.fullgraph = t->fullgraph;
    options.user_data = &p;
    options.recompile_limit = 64;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(program_fn, &options, &compiled), TP_OK);
    for (int call = 0; call < calls; call++) {
        int64_t rows = t->dynamic ? 2 + random_below(&state, 4) : 3;
        snprintf(context, sizeof context,
                 "seed %u (rerun: TP_PROPERTY_SEED=%u), backend %s, %s%s, call %d, rows %lld: %s",
                 t->seed, t->seed, t->backend, t->dynamic ? "dynamic" : "static",
                 t->fullgraph ? ", fullgraph" : "", call, (long long)rows, description);
        tp_tensor *x, *w;
        make_inputs(&state, rows, &x, &w);
        p.num_reads = 0;
        tp_tensor *want = run_eagerly(&p, x, w, context);
        double eager_reads[MAX_READS];
        int num_eager = p.num_reads;
        memcpy(eager_reads, p.reads, sizeof eager_reads);
        p.num_reads = 0;
        tp_arg args[2] = {tp_arg_tensor(x), tp_arg_tensor(w)};
        tp_tensor *got = NULL;
        ck_assert_msg(tp_call(compiled, args, 2, &got) == TP_OK, "%s: %s", context,
                      tp_last_error());
        assert_close(got, want, context);
        assert_same_reads(eager_reads, num_eager, &p, context);
        tp_tensor_release(got);
        tp_tensor_release(want);
        tp_tensor_release(x);
        tp_tensor_release(w);
    }
    tp_compiled_free(compiled);
}

static int env_int(const char *name, int fallback) {
    const char *text = getenv(name);
    return text && *text ? atoi(text) : fallback;
}

static bool backend_available(const char *name) {
    tp_backend *backend;
    return strcmp(name, "eager") == 0 || tp_backend_lookup(name, &backend) == TP_OK;
}

static void run_property(const char *backend, int functions, int calls) {
    if (!backend_available(backend)) return;
    uint32_t fixed = (uint32_t)env_int("TP_PROPERTY_SEED", 0);
    uint32_t base = 0x5eed0000u ^ (uint32_t)(backend[0] * 131 + backend[1]);
    for (int i = 0; i < (fixed ? 1 : functions); i++) {
        uint32_t seed = fixed ? fixed : base + (uint32_t)i * 7919u;
        uint32_t mode = seed % 4; /* static, dynamic, static fullgraph, dynamic fullgraph */
        trial t = {backend, seed, mode & 1, mode >= 2};
        run_trial(&t, calls);
    }
}

START_TEST(random_functions_agree_with_eager_on_the_eager_backend) {
    run_property("eager", env_int("TP_PROPERTY_FUNCTIONS", 40), 8);
}
END_TEST

START_TEST(random_functions_agree_with_eager_on_stax) {
    run_property("stax", env_int("TP_PROPERTY_FUNCTIONS", 40) / 2, 6);
}
END_TEST

START_TEST(random_functions_agree_with_eager_on_opencl) {
    setenv("POCL_CACHE_DIR", "/tmp/pocl-cache", 0); /* PoCL's kernel cache, before it loads */
    run_property("opencl", env_int("TP_PROPERTY_FUNCTIONS", 40) / 6, 5);
}
END_TEST

/* Skipped where no NVIDIA driver is found (the backend is unavailable). */
START_TEST(random_functions_agree_with_eager_on_cuda) {
    run_property("cuda", env_int("TP_PROPERTY_FUNCTIONS", 40) / 6, 5);
}
END_TEST

TP_TEST_SUITE(compile_capture_property) {
    Suite *suite = suite_create("compile_capture_property");
    TCase *tc = tcase_create("capture_property");
    tcase_add_checked_fixture(tc, fixture_setup, NULL);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, random_functions_agree_with_eager_on_the_eager_backend);
    tcase_add_test(tc, random_functions_agree_with_eager_on_stax);
    tcase_add_test(tc, random_functions_agree_with_eager_on_opencl);
    tcase_add_test(tc, random_functions_agree_with_eager_on_cuda);
    suite_add_tcase(suite, tc);
    return suite;
}
