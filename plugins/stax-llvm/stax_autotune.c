/* stax-llvm — max-autotune (stax_autotune.h). For every packed-matmul step
 * of a compiled program, the choices the driver otherwise takes from the
 * family's defaults and the shape (micro-kernel family, kc, mc, the split
 * of the work, the thread count) are measured on scratch buffers the size
 * of the step's inputs and outputs, one choice at a time from the defaults:
 * the family, then the split, the threads, kc and mc. A candidate replaces
 * the best so far when it beats a fresh timing of it by the required ratio;
 * the winner must then beat the defaults in alternating rounds. Every
 * timing is a median (STAX_AUTOTUNE_*_REPETITIONS) after a warm-up, and
 * each one runs only if its estimated cost fits in the budget. The
 * result goes into the disk cache (subfolder "stax-autotune") under the
 * step's key (stax_autotune_entry.c), so the next compile of the same shape
 * on the same machine reads it instead of measuring. Owns the measuring and
 * the cache traffic; the driver itself is stax_gemm_packed.c's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "stax_autotune.h"
#include "tpcommon_cache.h"

typedef struct tuner {
    const tp_plugin_host *host;
    const stax_program *program;
    void *const *kernels; /* the program's loaded kernels (epilogues) */
    stax_autotune *tune;
    void **slot_data; /* the executable's bound slots */
    void **slots;     /* inputs and outputs: scratch copies; the rest: the executable's */
    float *workspace;
    size_t workspace_bytes;
    int64_t max_threads;
    uint64_t deadline;
    tpcommon_cache cache;
    bool use_cache;
    char families[64]; /* the candidate families' names, for the key */
} tuner;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the candidate families ---- */

/* The tile kernels of `family`: its micro-kernel library (stax_gemm_library.c). */
static int32_t load_family(const tp_plugin_host *host, const stax_gemm_family *family,
                           stax_gemm_kernels *out, stax_module **module, char *error,
                           size_t error_size) {
    stax_gemm_library library;
    int32_t status = stax_gemm_library_load(host, false, family, NULL, &library, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    *module = library.module;
    stax_gemm_kernels_from_library(host, family, &library, out);
    return TP_PLUGIN_OK;
}

/* The program's family first, then (unless STAX_GEMM_KERNEL forces one) the
 * other families the host runs natively, fastest kind first; only the
 * program's is loaded (load_candidate loads the others when needed). */
static void list_families(tuner *t, const stax_gemm_kernels *program_kernels) {
    stax_autotune *tune = t->tune;
    tune->families[0] = *program_kernels;
    tune->num_families = 1;
    snprintf(t->families, sizeof t->families, "%s", program_kernels->family->name);
    const char *forced = t->host->getenv ? t->host->getenv("STAX_GEMM_KERNEL") : NULL;
    if (forced && *forced && strcmp(forced, "auto") != 0) return;
    static const char *const order[] = {"avx512", "avx2", "generic"};
    const stax_gemm_family *best = stax_gemm_family_for_features(stax_jit_features());
    bool runs = false;
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        const stax_gemm_family *family = stax_gemm_family_named(order[i]);
        runs = runs || family == best; /* the host's best and every kind after it */
        if (!runs || !family || family == program_kernels->family) continue;
        stax_gemm_kernels *listed = &tune->families[tune->num_families++];
        memset(listed, 0, sizeof *listed);
        listed->family = family; /* tiles: load_candidate */
        size_t used = strlen(t->families);
        snprintf(t->families + used, sizeof t->families - used, ",%s", family->name);
    }
}

static int32_t load_candidate(tuner *t, int32_t f, char *error, size_t error_size) {
    stax_gemm_kernels *kernels = &t->tune->families[f];
    if (kernels->tile[0]) return TP_PLUGIN_OK;
    return load_family(t->host, kernels->family, kernels, &t->tune->modules[f], error, error_size);
}

/* ---- measuring ---- */

/* Scratch copies of the program's input and output slots. */
static bool prepare_slots(tuner *t, void **slot_data) {
    const stax_program *prog = t->program;
    t->slots = calloc((size_t)prog->num_slots + 1, sizeof *t->slots);
    if (!t->slots) return false;
    for (int32_t s = 0; s < prog->num_slots; s++) {
        const stax_slot *slot = &prog->slots[s];
        t->slots[s] = slot_data[s];
        if (slot->kind == STAX_SLOT_SCRATCH) /* the arena is not cleared (stax_arena.c) */
            memset(t->slots[s], 0, slot->bytes);
        if (slot->kind != STAX_SLOT_INPUT && slot->kind != STAX_SLOT_OUTPUT) continue;
        t->slots[s] = stax_alloc_aligned(t->host, slot->bytes > 0 ? slot->bytes : 1);
        if (!t->slots[s]) return false;
        memset(t->slots[s], 0, slot->bytes); /* zeros: no denormals, no NaN in the timing */
    }
    return true;
}

static void release_slots(tuner *t) {
    for (int32_t s = 0; t->slots && s < t->program->num_slots; s++) {
        stax_slot_kind kind = t->program->slots[s].kind;
        if (kind == STAX_SLOT_INPUT || kind == STAX_SLOT_OUTPUT)
            stax_free_aligned(t->host, t->slots[s]);
    }
    free(t->slots);
    stax_free_aligned(t->host, t->workspace);
}

/* What measuring needs, made once per compile when a step first needs it:
 * every candidate family's kernels and the scratch slots. */
static int32_t prepare_measuring(tuner *t, char *error, size_t error_size) {
    if (t->slots) return TP_PLUGIN_OK;
    uint64_t start = now_ns();
    for (int32_t f = 1; f < t->tune->num_families; f++) {
        int32_t status = load_candidate(t, f, error, error_size);
        if (status != TP_PLUGIN_OK) return status;
    }
    t->deadline += now_ns() - start; /* compiling kernels is not measuring */
    if (!prepare_slots(t, t->slot_data))
        return tpcommon_error(error, error_size,
                              "stax: out of memory for max-autotune's scratch buffers");
    return TP_PLUGIN_OK;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Median time of one candidate, or UINT64_MAX when out of memory. */
static uint64_t measure(tuner *t, const stax_step *step, const stax_gemm_tuned *c) {
    size_t need = stax_gemm_packed_workspace_bytes(&step->gemm, &c->kernels, c->threads);
    if (need > t->workspace_bytes) {
        stax_free_aligned(t->host, t->workspace);
        t->workspace_bytes = 0;
        t->workspace = stax_alloc_aligned(t->host, need);
        if (!t->workspace) return UINT64_MAX;
        t->workspace_bytes = need;
    }
    stax_kernel_fn epilogue = step->gemm.epilogue >= 0
                                  ? (stax_kernel_fn)(uintptr_t)t->kernels[step->gemm.epilogue]
                                  : NULL;
    uint64_t times[STAX_AUTOTUNE_MAX_REPETITIONS], total = 0;
    int count = 0;
    for (int r = -1; r < STAX_AUTOTUNE_MAX_REPETITIONS; r++) {
        uint64_t start = now_ns();
        stax_gemm_packed_run_split(t->host, &step->gemm, t->slots, t->workspace, &c->kernels,
                                   epilogue, c->threads, c->split);
        if (r < 0) continue; /* the warm-up */
        times[count] = now_ns() - start;
        total += times[count++];
        if (count >= STAX_AUTOTUNE_MIN_REPETITIONS && total >= STAX_AUTOTUNE_SPAN_NS) break;
    }
    qsort(times, (size_t)count, sizeof *times, compare_u64);
    return times[count / 2];
}

/* One step's search: the best so far and how many candidates ran. */
typedef struct search {
    tuner *t;
    const stax_step *step;
    stax_gemm_tuned best;
    uint64_t default_ns;
    uint64_t measure_cost_ns; /* what one measure() of a candidate costs, about */
    int32_t candidates;
    bool complete; /* every stage ran within the budget */
    double ratio;  /* the winner's time over the defaults' in the confirming rounds */
} search;

/* Whether `measures` more measure() calls fit in the budget. */
static bool budget_allows(search *s, int measures) {
    if (now_ns() + (uint64_t)measures * s->measure_cost_ns <= s->t->deadline) return true;
    s->complete = false;
    return false;
}

static void try_candidate(search *s, const stax_gemm_tuned *candidate) {
    if (!budget_allows(s, 2)) return;
    /* paired with a fresh time of the best so far: the load on a shared
     * machine drifts between stages */
    uint64_t best_ns = measure(s->t, s->step, &s->best);
    uint64_t ns = measure(s->t, s->step, candidate);
    s->candidates++;
    if ((double)ns <= STAX_AUTOTUNE_REQUIRED_RATIO * (double)best_ns) s->best = *candidate;
}

static void try_families(search *s) {
    stax_gemm_tuned base = s->best;
    for (int32_t f = 0; f < s->t->tune->num_families; f++) {
        if (s->t->tune->families[f].family == base.kernels.family) continue;
        stax_gemm_tuned c = base;
        c.kernels = s->t->tune->families[f];
        try_candidate(s, &c);
    }
}

static void try_splits(search *s) {
    stax_gemm_tuned base = s->best;
    for (int split = STAX_GEMM_SPLIT_COLUMNS; split <= STAX_GEMM_SPLIT_BATCHES; split++) {
        if (split == (int)base.split) continue;
        if (split == STAX_GEMM_SPLIT_BATCHES && s->step->gemm.batch < 2) continue;
        stax_gemm_tuned c = base;
        c.split = (stax_gemm_split)split;
        try_candidate(s, &c);
    }
}

/* 1, 2, 4, ... below the limit, then the limit. */
static void try_threads(search *s) {
    stax_gemm_tuned base = s->best;
    int64_t limit = s->t->max_threads;
    for (int64_t threads = 1;; threads = threads * 2 < limit ? threads * 2 : limit) {
        if (threads != base.threads) {
            stax_gemm_tuned c = base;
            c.threads = threads;
            try_candidate(s, &c);
        }
        if (threads == limit) break;
    }
}

/* kc (the k block) at half and twice the current one, where k allows it. */
static void try_kc(search *s) {
    stax_gemm_tuned base = s->best;
    int64_t sizes[2] = {base.kernels.kc / 2, base.kernels.kc * 2};
    for (int i = 0; i < 2; i++) {
        if (sizes[i] < 16 || sizes[i] > 4096) continue;
        if (sizes[i] > base.kernels.kc && base.kernels.kc >= s->step->gemm.k) continue;
        stax_gemm_tuned c = base;
        c.kernels.kc = sizes[i];
        try_candidate(s, &c);
    }
}

/* mc (rows of A per chunk, a multiple of mr) at half and twice, where m allows. */
static void try_mc(search *s) {
    stax_gemm_tuned base = s->best;
    int64_t mr = base.kernels.family->mr;
    int64_t sizes[2] = {base.kernels.mc / 2 / mr * mr, base.kernels.mc * 2 / mr * mr};
    for (int i = 0; i < 2; i++) {
        if (sizes[i] < mr || sizes[i] == base.kernels.mc) continue;
        if (sizes[i] > base.kernels.mc && base.kernels.mc >= s->step->gemm.m) continue;
        stax_gemm_tuned c = base;
        c.kernels.mc = sizes[i];
        try_candidate(s, &c);
    }
}

static stax_gemm_tuned default_choice(const tuner *t, const stax_step *step) {
    stax_gemm_tuned d = {.kernels = t->tune->families[0], .threads = t->max_threads};
    d.split = stax_gemm_packed_default_split(t->host, &step->gemm, &d.kernels, d.threads);
    return d;
}

static bool same_choice(const stax_gemm_tuned *a, const stax_gemm_tuned *b) {
    return a->kernels.family == b->kernels.family && a->kernels.kc == b->kernels.kc &&
           a->kernels.mc == b->kernels.mc && a->split == b->split && a->threads == b->threads;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The winner against the defaults in alternating rounds; the defaults stay
 * unless the winner is clearly faster. *ratio: winner / defaults. */
static bool confirm(search *s, const stax_gemm_tuned *defaults, double *ratio) {
    double ratios[STAX_AUTOTUNE_CONFIRM_ROUNDS];
    int rounds = 0; /* while the budget lasts; none: the defaults stay */
    bool searched_all = s->complete;
    while (rounds < STAX_AUTOTUNE_CONFIRM_ROUNDS && budget_allows(s, 2)) {
        uint64_t d = measure(s->t, s->step, defaults), w = measure(s->t, s->step, &s->best);
        ratios[rounds++] = d > 0 ? (double)w / (double)d : 1.0;
    }
    if (rounds == 0) return false;
    s->complete = searched_all; /* confirmed, if in fewer rounds */
    qsort(ratios, (size_t)rounds, sizeof *ratios, compare_double);
    *ratio = ratios[rounds / 2];
    return *ratio <= STAX_AUTOTUNE_REQUIRED_RATIO;
}

static search search_step(tuner *t, const stax_step *step) {
    stax_gemm_tuned defaults = default_choice(t, step);
    search s = {.t = t, .step = step, .best = defaults, .complete = true, .ratio = 1.0};
    s.default_ns = measure(t, step, &s.best);
    uint64_t span = STAX_AUTOTUNE_MIN_REPETITIONS * s.default_ns;
    s.measure_cost_ns =
        s.default_ns + (span > STAX_AUTOTUNE_SPAN_NS ? span : STAX_AUTOTUNE_SPAN_NS);
    s.candidates = 1;
    try_families(&s);
    try_splits(&s);
    try_threads(&s);
    try_kc(&s);
    try_mc(&s);
    if (!same_choice(&s.best, &defaults) && !confirm(&s, &defaults, &s.ratio)) s.best = defaults;
    return s;
}

/* ---- the cache ---- */

static void choice_of(const stax_gemm_tuned *tuned, stax_gemm_choice *choice) {
    snprintf(choice->family, sizeof choice->family, "%s", tuned->kernels.family->name);
    choice->kc = tuned->kernels.kc;
    choice->mc = tuned->kernels.mc;
    choice->split = tuned->split;
    choice->threads = tuned->threads;
}

/* The choice as this executable can run it, or false (with why). */
static bool tuned_of(tuner *t, const stax_gemm_choice *choice, stax_gemm_tuned *out, char *why,
                     size_t why_size) {
    for (int32_t f = 0; f < t->tune->num_families; f++) {
        const stax_gemm_kernels *kernels = &t->tune->families[f];
        if (strcmp(kernels->family->name, choice->family) != 0) continue;
        if (choice->threads > t->max_threads || choice->mc < kernels->family->mr) {
            snprintf(why, why_size, "threads or mc out of range for this compile");
            return false;
        }
        char error[512] = "";
        if (load_candidate(t, f, error, sizeof error) != TP_PLUGIN_OK) {
            snprintf(why, why_size, "%s", error);
            return false;
        }
        *out = (stax_gemm_tuned){
            .kernels = *kernels, .split = choice->split, .threads = choice->threads};
        out->kernels.kc = choice->kc;
        out->kernels.mc = choice->mc;
        return true;
    }
    snprintf(why, why_size, "family '%s' is not one this compile may use", choice->family);
    return false;
}

static bool read_cached(tuner *t, const char *key, stax_gemm_tuned *out) {
    if (!t->use_cache) return false;
    size_t size = 0;
    char *payload = tpcommon_cache_read(&t->cache, key, &size);
    char path[2400], why[128] = "";
    tpcommon_cache_entry_path(&t->cache, key, path, sizeof path);
    if (!payload) {
        struct stat info;
        if (stat(path, &info) == 0) /* there, but corrupt or another key's */
            tpcommon_log(t->host, TP_PLUGIN_LOG_WARN,
                         "max-autotune: ignoring tuning cache entry %s (corrupt or not this "
                         "step's); measuring again",
                         path);
        return false;
    }
    stax_gemm_choice choice;
    bool ok = stax_gemm_choice_parse(payload, size, &choice, why, sizeof why) &&
              tuned_of(t, &choice, out, why, sizeof why);
    free(payload);
    if (!ok)
        tpcommon_log(t->host, TP_PLUGIN_LOG_WARN,
                     "max-autotune: ignoring tuning cache entry %s (%s); measuring again", path,
                     why);
    return ok;
}

static void write_cached(tuner *t, const char *key, const stax_gemm_tuned *tuned) {
    if (!t->use_cache) return;
    stax_gemm_choice choice;
    char text[256];
    choice_of(tuned, &choice);
    stax_gemm_choice_format(&choice, text, sizeof text);
    tpcommon_cache_write(&t->cache, key, text, strlen(text));
}

/* ---- the program ---- */

static int32_t tune_step(tuner *t, int32_t index, char *error, size_t error_size) {
    const stax_step *step = &t->program->steps[index];
    stax_gemm_tuned *out = &t->tune->steps[index];
    const stax_gemm *g = &step->gemm;
    char key[4096], shape[96];
    snprintf(shape, sizeof shape, "gemm %lldx%lldx%lldx%lld", (long long)g->batch, (long long)g->m,
             (long long)g->n, (long long)g->k);
    bool keyed = stax_autotune_key(stax_jit_cpu(), stax_jit_features(), t->families, t->max_threads,
                                   g, key, sizeof key);
    if (keyed && read_cached(t, key, out)) {
        tpcommon_log(t->host, TP_PLUGIN_LOG_DEBUG,
                     "max-autotune: %s: from the tuning cache: %s kc %lld mc %lld split %s threads "
                     "%lld",
                     shape, out->kernels.family->name, (long long)out->kernels.kc,
                     (long long)out->kernels.mc, stax_gemm_split_name(out->split),
                     (long long)out->threads);
        return TP_PLUGIN_OK;
    }
    if (now_ns() >= t->deadline) {
        *out = default_choice(t, step);
        tpcommon_log(
            t->host, TP_PLUGIN_LOG_INFO,
            "max-autotune: %s: the tuning budget of this compile is spent; default choices "
            "(not cached)",
            shape);
        return TP_PLUGIN_OK;
    }
    int32_t status = prepare_measuring(t, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    search s = search_step(t, step);
    *out = s.best;
    tpcommon_log(
        t->host, TP_PLUGIN_LOG_INFO,
        "max-autotune: %s: measured %d candidates: %s kc %lld mc %lld split %s threads %lld "
        "(%s; the search's best ran at %.2fx the defaults' %.3f ms)%s",
        shape, (int)s.candidates, out->kernels.family->name, (long long)out->kernels.kc,
        (long long)out->kernels.mc, stax_gemm_split_name(out->split), (long long)out->threads,
        s.ratio <= STAX_AUTOTUNE_REQUIRED_RATIO ? "tuned" : "the defaults", s.ratio,
        (double)s.default_ns / 1e6,
        s.complete ? "" : "; budget spent before every candidate ran (not cached)");
    if (keyed && s.complete) write_cached(t, key, out);
    return TP_PLUGIN_OK;
}

int32_t stax_autotune_program(const tp_plugin_host *host, const stax_program *program,
                              void **slot_data, void *const *kernels,
                              const stax_gemm_kernels *program_kernels, int64_t threads,
                              int64_t budget_ms, stax_autotune *out, char *error,
                              size_t error_size) {
    memset(out, 0, sizeof *out);
    if (!program_kernels || !program_kernels->family) return TP_PLUGIN_OK; /* no packed steps */
    tuner t = {.host = host,
               .program = program,
               .kernels = kernels,
               .tune = out,
               .max_threads = threads > 1 && host->parallel_for ? threads : 1};
    out->num_steps = program->num_steps;
    out->steps = calloc((size_t)program->num_steps + 1, sizeof *out->steps);
    if (!out->steps) return tpcommon_error(error, error_size, "stax: out of memory");
    list_families(&t, program_kernels);
    t.slot_data = slot_data;
    t.use_cache = tpcommon_cache_open(&t.cache, host, "stax-autotune");
    t.deadline = now_ns() + (uint64_t)budget_ms * 1000000u; /* the budget bounds the measuring */
    int32_t status = TP_PLUGIN_OK;
    for (int32_t i = 0; status == TP_PLUGIN_OK && i < program->num_steps; i++)
        if (program->steps[i].kind == STAX_STEP_PACKED_GEMM)
            status = tune_step(&t, i, error, error_size);
    release_slots(&t);
    if (status != TP_PLUGIN_OK) stax_autotune_free(out);
    return status;
}

void stax_autotune_free(stax_autotune *tune) {
    for (int32_t f = 0; f < tune->num_families; f++) stax_module_release(tune->modules[f]);
    free(tune->steps);
    memset(tune, 0, sizeof *tune);
}
