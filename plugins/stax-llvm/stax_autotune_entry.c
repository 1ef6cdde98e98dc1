/* stax-llvm — the max-autotune cache entries: the key a step's choices are
 * stored under and the text of the choices. Plain C (no LLVM, no host), so
 * the tests compile it in and check it directly. An entry read back is
 * parsed strictly: anything but exactly the format below, with numbers in
 * range, is refused and the caller measures again. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "stax_autotune.h"

/* Bump when the meaning of a choice changes: older entries then miss. */
#define ENTRY_FORMAT 1

static const char *const split_names[] = {"auto", "columns", "rows", "batches"};

const char *stax_gemm_split_name(stax_gemm_split split) {
    return split >= STAX_GEMM_SPLIT_AUTO && split <= STAX_GEMM_SPLIT_BATCHES ? split_names[split]
                                                                             : "?";
}

static const char *layout_class(int64_t rs, int64_t cs) {
    if (cs == 1) return "rows";
    if (rs == 1) return "columns";
    return "strided";
}

static bool broadcasts(const int64_t *strides, int32_t ndim, const int64_t *dims) {
    for (int32_t d = 0; d < ndim; d++)
        if (strides[d] == 0 && dims[d] > 1) return true;
    return false;
}

bool stax_autotune_key(const char *cpu, const char *features, const char *families, int64_t threads,
                       const stax_gemm *g, char *out, size_t size) {
    int used =
        snprintf(out, size,
                 "stax-autotune %d; stax %s; cpu %s; features %s; families %s; threads %" PRId64
                 "; gemm batch %" PRId64 " m %" PRId64 " n %" PRId64 " k %" PRId64
                 "; a %s%s; b %s%s; epilogue %s",
                 ENTRY_FORMAT, STAX_VERSION, cpu ? cpu : "", features ? features : "", families,
                 threads, g->batch, g->m, g->n, g->k, layout_class(g->a_rs, g->a_cs),
                 broadcasts(g->a_batch_strides, g->batch_ndim, g->batch_dims) ? " broadcast" : "",
                 layout_class(g->b_rs, g->b_cs),
                 broadcasts(g->b_batch_strides, g->batch_ndim, g->batch_dims) ? " broadcast" : "",
                 g->epilogue >= 0 ? "yes" : "no");
    return used > 0 && (size_t)used < size;
}

void stax_gemm_choice_format(const stax_gemm_choice *c, char *out, size_t size) {
    snprintf(out, size,
             "family %s; kc %" PRId64 "; mc %" PRId64 "; split %s; threads %" PRId64 "\n",
             c->family, c->kc, c->mc, stax_gemm_split_name(c->split), c->threads);
}

static bool refuse(char *why, size_t size, const char *reason) {
    snprintf(why, size, "%s", reason);
    return false;
}

bool stax_gemm_choice_parse(const char *text, size_t length, stax_gemm_choice *c, char *why,
                            size_t why_size) {
    char line[256], family[16], split[16];
    if (length == 0 || length >= sizeof line) return refuse(why, why_size, "wrong length");
    memcpy(line, text, length);
    line[length] = '\0';
    if (strlen(line) != length) return refuse(why, why_size, "a NUL byte in the text");
    long long kc = 0, mc = 0, threads = 0;
    int consumed = 0;
    if (sscanf(line, "family %15[a-z0-9]; kc %lld; mc %lld; split %15[a-z]; threads %lld\n%n",
               family, &kc, &mc, split, &threads, &consumed) != 5 ||
        (size_t)consumed != length)
        return refuse(why, why_size, "not a choice line");
    if (kc < 1 || kc > 1 << 16 || mc < 1 || mc > 1 << 20 || threads < 1 || threads > 4096)
        return refuse(why, why_size, "a number out of range");
    c->split = STAX_GEMM_SPLIT_AUTO;
    for (int s = STAX_GEMM_SPLIT_COLUMNS; s <= STAX_GEMM_SPLIT_BATCHES; s++)
        if (!strcmp(split, split_names[s])) c->split = (stax_gemm_split)s;
    if (c->split == STAX_GEMM_SPLIT_AUTO) return refuse(why, why_size, "an unknown split");
    snprintf(c->family, sizeof c->family, "%s", family);
    c->kc = kc, c->mc = mc, c->threads = threads;
    return true;
}
