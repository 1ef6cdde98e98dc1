/* stax-llvm — identical kernels compiled once. Kernels of different regions
 * often have the same code: every clip epilogue of a MobileNetV2 conv,
 * every residual add of a ResNet (a flat loop's text holds no size: 45
 * kernels, 2 distinct bodies in MobileNetV2). Each kernel is a wrapper that
 * loads its slot pointers and calls its body with them (stax_emit_core.c's
 * fn_finish), so two kernels whose bodies are equal once their slot
 * pointers are numbered in the order the body first uses them can call one
 * body: LLVM then optimises and compiles it once, where inlining it into
 * every wrapper made it compile it per kernel. A body that only one kernel
 * calls is still inlined into its wrapper. Owns the table of bodies and
 * their renaming; what a body computes is the emitters'. */
#include "stax_kernel_bodies.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_text(const char *text) {
    uint64_t hash = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        hash = (hash ^ *p) * 1099511628211ull;
    return hash;
}

static bool is_identifier_char(char c) {
    return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$' || c == '-';
}

/* The slot number of a slot pointer "%sN" at p (N < num_slots, used),
 * *after set past it; -1 when p starts no such name. */
static long slot_name_at(const char *p, const bool *used, int32_t num_slots, const char **after) {
    if (p[0] != '%' || p[1] != 's' || !isdigit((unsigned char)p[2])) return -1;
    char *end;
    long slot = strtol(p + 2, &end, 10);
    if (is_identifier_char(*end) || slot >= num_slots || !used[slot]) return -1;
    *after = end;
    return slot;
}

/* `text` with each %sN of a used slot N written as %argK, K the order in
 * which N first appears in the text (caller frees; NULL when out of
 * memory); order[K] = N. Numbered by first use, not by N, so that two
 * kernels doing the same with their operands in slots numbered the other
 * way round (a layer's norm reading its input from a later slot than its
 * weights, the next layer's from an earlier one) have one text. One pass,
 * into a buffer sized for the worst case ("%argK" for "%s0": at most
 * eleven characters more for an int32 K). */
static char *positional(const char *text, const bool *used, int32_t num_slots, int32_t *order,
                        int32_t *count) {
    size_t length = strlen(text), pointers = 0;
    for (const char *p = strstr(text, "%s"); p; p = strstr(p + 2, "%s")) pointers++;
    int32_t *position = malloc(sizeof *position * ((size_t)num_slots + 1));
    char *out = malloc(length + 11 * pointers + 1);
    if (!position || !out) {
        free(position);
        free(out);
        return NULL;
    }
    *count = 0;
    for (int32_t s = 0; s < num_slots; s++) position[s] = -1;
    char *w = out;
    for (const char *p = text; *p;) {
        const char *after;
        long slot = slot_name_at(p, used, num_slots, &after);
        if (slot < 0) {
            *w++ = *p++;
            continue;
        }
        if (position[slot] < 0) {
            order[*count] = (int32_t)slot;
            position[slot] = (*count)++;
        }
        w += sprintf(w, "%%arg%d", (int)position[slot]);
        p = after;
    }
    *w = '\0';
    /* a used slot the text never names (none today) still gets its argument */
    for (int32_t s = 0; s < num_slots; s++)
        if (used[s] && position[s] < 0) order[(*count)++] = s;
    free(position);
    return out;
}

static bool grow(stax_kernel_bodies *b) {
    if (b->count < b->capacity) return true;
    int32_t capacity = b->capacity ? b->capacity * 2 : 16;
    char **texts = realloc(b->texts, sizeof *texts * (size_t)capacity);
    if (texts) b->texts = texts;
    uint64_t *hashes = realloc(b->hashes, sizeof *hashes * (size_t)capacity);
    if (hashes) b->hashes = hashes;
    int32_t *num_args = realloc(b->num_args, sizeof *num_args * (size_t)capacity);
    if (num_args) b->num_args = num_args;
    int32_t *uses = realloc(b->uses, sizeof *uses * (size_t)capacity);
    if (uses) b->uses = uses;
    if (!texts || !hashes || !num_args || !uses) return false;
    b->capacity = capacity;
    return true;
}

int32_t stax_kernel_bodies_add(stax_kernel_bodies *b, const char *text, const bool *used,
                               int32_t num_slots, int32_t *order) {
    int32_t num_args = 0;
    char *canonical = positional(text, used, num_slots, order, &num_args);
    if (!canonical) return -1;
    uint64_t hash = hash_text(canonical);
    for (int32_t i = 0; i < b->count; i++)
        if (b->hashes[i] == hash && b->num_args[i] == num_args &&
            strcmp(b->texts[i], canonical) == 0) {
            free(canonical);
            b->uses[i]++;
            return i;
        }
    if (!grow(b)) {
        free(canonical);
        return -1;
    }
    b->texts[b->count] = canonical;
    b->hashes[b->count] = hash;
    b->num_args[b->count] = num_args;
    b->uses[b->count] = 1;
    return b->count++;
}

void stax_kernel_body_name(int32_t index, char *out, size_t size) {
    snprintf(out, size, "STAXKEY_body%d", (int)index);
}

bool stax_kernel_bodies_emit(const stax_kernel_bodies *b, tpcommon_buf *module) {
    char name[48];
    for (int32_t i = 0; i < b->count; i++) {
        stax_kernel_body_name(i, name, sizeof name);
        tpcommon_buf_printf(module, "define internal void @%s(", name);
        for (int32_t a = 0; a < b->num_args[i]; a++)
            tpcommon_buf_printf(module, "ptr noalias %%arg%d, ", (int)a);
        tpcommon_buf_printf(module, "ptr %%params, i64 %%begin, i64 %%end) #%d {\n",
                            b->uses[i] <= 1                         ? 1
                            : stax_ir_calls_float_math(b->texts[i]) ? STAX_ATTRS_WIDE_NOINLINE
                                                                    : 2);
        tpcommon_buf_append(module, b->texts[i]);
        tpcommon_buf_append(module, "}\n\n");
    }
    return !module->failed;
}

bool stax_ir_calls_float_math(const char *text) {
    return text && strstr(text, "call float @stax_") != NULL;
}

void stax_kernel_bodies_free(stax_kernel_bodies *b) {
    for (int32_t i = 0; i < b->count; i++) free(b->texts[i]);
    free(b->texts);
    free(b->hashes);
    free(b->num_args);
    free(b->uses);
    memset(b, 0, sizeof *b);
}
