/* stax-llvm — a graph module's IR text split into parts that compile on
 * threads of their own (stax_ir_split.h). The text is read as top-level
 * items: a function definition ("define ... @NAME(...) {" up to a line "}"),
 * or one line of anything else (declarations, attribute groups, blank
 * lines), which every part carries. Each kernel (a function not `internal`)
 * is placed in one part together with the internal functions it calls
 * (shared bodies, math functions); the kernels are placed largest first,
 * each in the part that must add least for it (what it calls that the part
 * already holds is not copied) among those it leaves within a tenth over an
 * even share, so kernels sharing a body share a part while the parts come
 * out even. Owns the split only; compiling the
 * parts is stax_jit.c's. */
#include "stax_ir_split.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct ir_item {
    size_t start, end; /* [start, end) of the text, its last newline included */
    bool is_define, internal;
    const char *name; /* the function's name (is_define), name_length bytes */
    size_t name_length;
    int32_t *calls; /* items of the functions it names */
    int32_t num_calls, capacity;
} ir_item;

typedef struct ir_reader {
    const char *ir;
    ir_item *items;
    int32_t count, capacity;
    int32_t *by_name; /* the define items, sorted by name */
    int32_t num_defines;
    bool unsupported; /* something the split does not divide: one part */
    bool failed;      /* out of memory */
} ir_reader;

static bool is_name_char(char c) {
    return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$' || c == '-';
}

static const char *line_end(const char *p) {
    const char *newline = strchr(p, '\n');
    return newline ? newline + 1 : p + strlen(p);
}

static ir_item *add_item(ir_reader *r) {
    if (r->count == r->capacity) {
        int32_t capacity = r->capacity ? r->capacity * 2 : 64;
        ir_item *grown = realloc(r->items, sizeof *grown * (size_t)capacity);
        if (!grown) {
            r->failed = true;
            return NULL;
        }
        r->items = grown;
        r->capacity = capacity;
    }
    ir_item *item = &r->items[r->count++];
    memset(item, 0, sizeof *item);
    return item;
}

/* Whether `word` occurs in [from, to). */
static bool has_word(const char *from, const char *to, const char *word) {
    size_t length = strlen(word);
    for (const char *p = from; p + length <= to; p++)
        if (memcmp(p, word, length) == 0) return true;
    return false;
}

/* A definition starting at `p`: its name, linkage and extent. */
static const char *read_define(ir_reader *r, ir_item *item, const char *p) {
    const char *first_end = line_end(p);
    const char *at = memchr(p, '@', (size_t)(first_end - p));
    if (!at || at[1] == '"') r->unsupported = true;
    if (at) {
        item->name = at + 1;
        while (is_name_char(item->name[item->name_length])) item->name_length++;
        item->internal = has_word(p, at, " internal ") || has_word(p, at, " private ");
    }
    const char *q = first_end;
    while (*q && !(q[0] == '}' && (q[1] == '\n' || q[1] == '\0'))) q = line_end(q);
    if (!*q) r->unsupported = true; /* no closing line */
    return *q ? line_end(q) : q;
}

static void read_items(ir_reader *r) {
    for (const char *p = r->ir; *p && !r->failed;) {
        ir_item *item = add_item(r);
        if (!item) return;
        item->start = (size_t)(p - r->ir);
        if (strncmp(p, "define ", 7) == 0) {
            item->is_define = true;
            p = read_define(r, item, p);
        } else {
            if (*p == '@') r->unsupported = true; /* a global variable */
            p = line_end(p);
        }
        item->end = (size_t)(p - r->ir);
    }
}

static const ir_reader *sorting; /* qsort has no context argument */

static int compare_names(const char *a, size_t a_length, const char *b, size_t b_length) {
    size_t shorter = a_length < b_length ? a_length : b_length;
    int order = memcmp(a, b, shorter);
    return order ? order : (a_length > b_length) - (a_length < b_length);
}

static int compare_items_by_name(const void *a, const void *b) {
    const ir_item *x = &sorting->items[*(const int32_t *)a];
    const ir_item *y = &sorting->items[*(const int32_t *)b];
    return compare_names(x->name, x->name_length, y->name, y->name_length);
}

static int32_t find_define(const ir_reader *r, const char *name, size_t length) {
    int32_t low = 0, high = r->num_defines - 1;
    while (low <= high) {
        int32_t mid = (low + high) / 2;
        const ir_item *item = &r->items[r->by_name[mid]];
        int order = compare_names(name, length, item->name, item->name_length);
        if (order == 0) return r->by_name[mid];
        if (order < 0)
            high = mid - 1;
        else
            low = mid + 1;
    }
    return -1;
}

static void add_call(ir_reader *r, ir_item *item, int32_t callee) {
    for (int32_t i = 0; i < item->num_calls; i++)
        if (item->calls[i] == callee) return;
    if (item->num_calls == item->capacity) {
        int32_t capacity = item->capacity ? item->capacity * 2 : 8;
        int32_t *grown = realloc(item->calls, sizeof *grown * (size_t)capacity);
        if (!grown) {
            r->failed = true;
            return;
        }
        item->calls = grown;
        item->capacity = capacity;
    }
    item->calls[item->num_calls++] = callee;
}

/* Every function each definition names (a call, or its address taken). */
static void read_calls(ir_reader *r) {
    r->by_name = malloc(sizeof *r->by_name * ((size_t)r->count + 1));
    if (!r->by_name) {
        r->failed = true;
        return;
    }
    for (int32_t i = 0; i < r->count; i++)
        if (r->items[i].is_define && r->items[i].name) r->by_name[r->num_defines++] = i;
    sorting = r;
    qsort(r->by_name, (size_t)r->num_defines, sizeof *r->by_name, compare_items_by_name);
    sorting = NULL;
    for (int32_t i = 0; i < r->count && !r->failed; i++) {
        ir_item *item = &r->items[i];
        if (!item->is_define) continue;
        const char *end = r->ir + item->end;
        for (const char *p = item->name + item->name_length; p < end; p++) {
            if (*p != '@') continue;
            size_t length = 0;
            while (is_name_char(p[1 + length])) length++;
            int32_t callee = find_define(r, p + 1, length);
            p += length;
            if (callee < 0 || callee == i) continue;               /* a declaration, or itself */
            if (!r->items[callee].internal) r->unsupported = true; /* kernel calls kernel */
            add_call(r, item, callee);
        }
    }
}

/* The internal functions `root` reaches (itself excluded) into closure[];
 * `mark` is stamped with `stamp` on each item visited. Returns how many. */
static int32_t reach(const ir_reader *r, int32_t root, int32_t *mark, int32_t stamp, int32_t *stack,
                     int32_t *closure) {
    int32_t depth = 0, count = 0;
    mark[root] = stamp;
    stack[depth++] = root;
    while (depth > 0) {
        const ir_item *item = &r->items[stack[--depth]];
        for (int32_t c = 0; c < item->num_calls; c++) {
            int32_t callee = item->calls[c];
            if (mark[callee] == stamp) continue;
            mark[callee] = stamp;
            closure[count++] = callee;
            stack[depth++] = callee;
        }
    }
    return count;
}

typedef struct ir_root {
    int32_t item;
    size_t closure; /* its internal functions: closures[closure .. + closure_count) */
    int32_t closure_count;
    size_t cost; /* its bytes and those of every function it reaches */
} ir_root;

static int compare_roots(const void *a, const void *b) {
    const ir_root *x = a, *y = b;
    if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
    return (x->item > y->item) - (x->item < y->item);
}

static size_t item_bytes(const ir_reader *r, int32_t i) {
    return r->items[i].end - r->items[i].start;
}

static int32_t single_part(const char *ir, int32_t num_names, size_t weight, stax_ir_parts *out) {
    out->parts = calloc(1, sizeof *out->parts);
    out->part_of_name = calloc((size_t)num_names + 1, sizeof *out->part_of_name);
    if (out->parts) out->parts[0].ir = strdup(ir);
    if (!out->parts || !out->part_of_name || !out->parts[0].ir) {
        stax_ir_parts_free(out);
        return -1;
    }
    out->count = 1;
    out->parts[0].weight = weight;
    out->parts[0].first_name = num_names > 0 ? 0 : -1;
    return 0;
}

/* The part text of `members` (items of the part; every non-define item too). */
static char *part_text(const ir_reader *r, const bool *members, size_t *weight) {
    size_t length = 0;
    *weight = 0;
    for (int32_t i = 0; i < r->count; i++)
        if (!r->items[i].is_define || members[i]) {
            length += item_bytes(r, i);
            if (r->items[i].is_define) *weight += item_bytes(r, i);
        }
    char *text = malloc(length + 1), *w = text;
    if (!text) return NULL;
    for (int32_t i = 0; i < r->count; i++)
        if (!r->items[i].is_define || members[i]) {
            memcpy(w, r->ir + r->items[i].start, item_bytes(r, i));
            w += item_bytes(r, i);
        }
    *w = '\0';
    return text;
}

typedef struct ir_split {
    ir_reader reader;
    ir_root *roots;
    int32_t num_roots;
    int32_t *mark, *stack;
    int32_t *closures; /* every root's internal functions, one after another */
    size_t closures_used, closures_capacity;
    bool *members;         /* [parts][items] */
    int32_t *part_of_item; /* the part of each root item, -1 otherwise */
    size_t *loads;
} ir_split;

static void split_free(ir_split *s) {
    for (int32_t i = 0; i < s->reader.count; i++) free(s->reader.items[i].calls);
    free(s->reader.items);
    free(s->reader.by_name);
    free(s->roots);
    free(s->mark);
    free(s->stack);
    free(s->closures);
    free(s->members);
    free(s->part_of_item);
    free(s->loads);
}

/* Room in s->closures for `count` more entries. */
static bool reserve_closures(ir_split *s, size_t count) {
    if (s->closures_used + count <= s->closures_capacity) return true;
    size_t capacity = (s->closures_used + count) * 2 + 64;
    int32_t *grown = realloc(s->closures, capacity * sizeof *grown);
    if (!grown) return false;
    s->closures = grown;
    s->closures_capacity = capacity;
    return true;
}

/* The roots (kernels), each with the internal functions it reaches. */
static bool find_roots(ir_split *s, size_t *total) {
    const ir_reader *r = &s->reader;
    size_t n = (size_t)r->count + 1;
    s->roots = calloc(n, sizeof *s->roots);
    s->mark = calloc(n, sizeof *s->mark);
    s->stack = malloc(n * sizeof *s->stack);
    s->part_of_item = malloc(n * sizeof *s->part_of_item);
    int32_t *reached = malloc(n * sizeof *reached);
    bool ok = s->roots && s->mark && s->stack && s->part_of_item && reached;
    *total = 0;
    for (int32_t i = 0; ok && i < r->count; i++) {
        s->part_of_item[i] = -1;
        if (!r->items[i].is_define) continue;
        *total += item_bytes(r, i);
        if (r->items[i].internal) continue;
        ir_root *root = &s->roots[s->num_roots];
        root->item = i;
        root->closure_count = reach(r, i, s->mark, s->num_roots + 1, s->stack, reached);
        ok = reserve_closures(s, (size_t)root->closure_count);
        if (!ok) break;
        root->closure = s->closures_used;
        memcpy(s->closures + s->closures_used, reached,
               (size_t)root->closure_count * sizeof *reached);
        s->closures_used += (size_t)root->closure_count;
        root->cost = item_bytes(r, i);
        for (int32_t c = 0; c < root->closure_count; c++) root->cost += item_bytes(r, reached[c]);
        s->num_roots++;
    }
    free(reached);
    if (ok) qsort(s->roots, (size_t)s->num_roots, sizeof *s->roots, compare_roots);
    return ok;
}

/* Places each root (largest first): in the part that must add the least
 * (its kernel and the functions it calls that the part lacks) among those
 * it leaves within `target` bytes, the least loaded first; when it fits
 * none, in the part it leaves smallest. */
static bool place_roots(ir_split *s, int32_t parts, size_t target) {
    const ir_reader *r = &s->reader;
    s->members = calloc((size_t)parts * (size_t)r->count + 1, sizeof *s->members);
    s->loads = calloc((size_t)parts, sizeof *s->loads);
    if (!s->members || !s->loads) return false;
    for (int32_t k = 0; k < s->num_roots; k++) {
        const ir_root *root = &s->roots[k];
        const int32_t *closure = s->closures + root->closure;
        int32_t best = -1, smallest = 0;
        size_t best_extra = 0, smallest_load = 0;
        for (int32_t q = 0; q < parts; q++) {
            const bool *members = s->members + (size_t)q * (size_t)r->count;
            size_t extra = item_bytes(r, root->item);
            for (int32_t c = 0; c < root->closure_count; c++)
                if (!members[closure[c]]) extra += item_bytes(r, closure[c]);
            size_t load = s->loads[q] + extra;
            if (q == 0 || load < smallest_load) smallest = q, smallest_load = load;
            bool fits = load <= target;
            if (fits && (best < 0 || extra < best_extra ||
                         (extra == best_extra && s->loads[q] < s->loads[best])))
                best = q, best_extra = extra;
        }
        if (best < 0) best = smallest;
        bool *members = s->members + (size_t)best * (size_t)r->count;
        size_t extra = item_bytes(r, root->item);
        for (int32_t c = 0; c < root->closure_count; c++)
            if (!members[closure[c]]) extra += item_bytes(r, closure[c]);
        members[root->item] = true;
        for (int32_t c = 0; c < root->closure_count; c++) members[closure[c]] = true;
        s->loads[best] += extra;
        s->part_of_item[root->item] = best;
    }
    return true;
}

/* The parts' texts (empty parts left out) and where each name went. */
static bool write_parts(ir_split *s, int32_t parts, const char *const *names, int32_t num_names,
                        stax_ir_parts *out) {
    const ir_reader *r = &s->reader;
    int32_t *renumber = malloc(sizeof *renumber * (size_t)parts);
    out->parts = calloc((size_t)parts, sizeof *out->parts);
    out->part_of_name = calloc((size_t)num_names + 1, sizeof *out->part_of_name);
    if (!renumber || !out->parts || !out->part_of_name) {
        free(renumber);
        return false;
    }
    for (int32_t q = 0; q < parts; q++) {
        renumber[q] = -1;
        if (s->loads[q] == 0) continue;
        stax_ir_part *part = &out->parts[out->count];
        part->first_name = -1;
        part->ir = part_text(r, s->members + (size_t)q * (size_t)r->count, &part->weight);
        if (!part->ir) {
            free(renumber);
            return false;
        }
        renumber[q] = out->count++;
    }
    for (int32_t i = num_names - 1; i >= 0; i--) {
        int32_t item = find_define(r, names[i], strlen(names[i]));
        int32_t part =
            item >= 0 && s->part_of_item[item] >= 0 ? renumber[s->part_of_item[item]] : 0;
        out->part_of_name[i] = part;
        out->parts[part].first_name = i;
    }
    free(renumber);
    return true;
}

/* One part of every kernel and the internal functions they reach: a
 * function nothing calls (a math routine no kernel uses, 12 KB of the
 * 20 KB a one-matmul graph's module was) is left out, as a split leaves
 * it out of every part. */
static bool reachable_part(ir_split *s, int32_t num_names, stax_ir_parts *out) {
    const ir_reader *r = &s->reader;
    bool *members = calloc((size_t)r->count + 1, sizeof *members);
    out->parts = calloc(1, sizeof *out->parts);
    out->part_of_name = calloc((size_t)num_names + 1, sizeof *out->part_of_name);
    bool ok = members && out->parts && out->part_of_name;
    for (int32_t k = 0; ok && k < s->num_roots; k++) {
        const ir_root *root = &s->roots[k];
        members[root->item] = true;
        for (int32_t c = 0; c < root->closure_count; c++)
            members[s->closures[root->closure + (size_t)c]] = true;
    }
    if (ok) out->parts[0].ir = part_text(r, members, &out->parts[0].weight);
    free(members);
    if (!ok || !out->parts[0].ir) return false;
    out->count = 1;
    out->parts[0].first_name = num_names > 0 ? 0 : -1;
    return true;
}

int32_t stax_ir_split(const char *ir, const char *const *names, int32_t num_names,
                      int32_t max_parts, stax_ir_parts *out) {
    memset(out, 0, sizeof *out);
    ir_split s;
    memset(&s, 0, sizeof s);
    s.reader.ir = ir;
    size_t total = strlen(ir);
    read_items(&s.reader);
    if (!s.reader.failed && !s.reader.unsupported) read_calls(&s.reader);
    bool ok = !s.reader.failed, divisible = ok && !s.reader.unsupported;
    int32_t parts = 1;
    if (divisible) {
        ok = find_roots(&s, &total);
        size_t by_size = total / STAX_IR_SPLIT_MIN_PART_BYTES;
        parts = by_size < (size_t)max_parts ? (int32_t)by_size : max_parts;
        if (parts > s.num_roots) parts = s.num_roots;
    }
    int32_t status = 0;
    if (!ok) {
        status = -1;
    } else if (parts <= 1 && divisible) {
        if (!reachable_part(&s, num_names, out)) {
            stax_ir_parts_free(out);
            status = -1;
        }
    } else if (parts <= 1) {
        status = single_part(ir, num_names, total, out);
    } else if (!place_roots(&s, parts, total / (size_t)parts + total / (size_t)parts / 10) ||
               !write_parts(&s, parts, names, num_names, out)) {
        stax_ir_parts_free(out);
        status = -1;
    }
    split_free(&s);
    return status;
}

void stax_ir_parts_free(stax_ir_parts *parts) {
    for (int32_t q = 0; parts->parts && q < parts->count; q++) free(parts->parts[q].ir);
    free(parts->parts);
    free(parts->part_of_name);
    memset(parts, 0, sizeof *parts);
}
