/* stax-llvm — dynamic shapes: one compiled object for every binding of the
 * graph's dimension symbols. compile plans the graph twice at two generic
 * bindings (recording the planner's size-dependent decisions); the integers
 * that differ between the two IR texts are the size-derived ones and become
 * kernel arguments (%P0, %P1, ... loaded from slots[num_slots]). run binds
 * the symbols from the input buffers, replans at those sizes replaying the
 * recorded decisions, checks that the IR has the same structure (same text
 * apart from the size arguments) and passes the new integers. Also owns the
 * executable's private copy of the graph view, needed to replan at run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stax_dynamic.h"
#include "stax_emit_core.h"

/* ---- a private copy of the graph view ---- */

static char *dup_text(const char *text) {
    return text ? strdup(text) : NULL;
}

static void *dup_bytes(const void *data, size_t bytes) {
    if (!data || !bytes) return NULL;
    void *copy = malloc(bytes);
    if (copy) memcpy(copy, data, bytes);
    return copy;
}

void stax_graph_free(tp_plugin_graph *g) {
    if (!g) return;
    tp_plugin_value *values = (tp_plugin_value *)g->values;
    for (int32_t v = 0; values && v < g->num_values; v++) {
        free((char *)values[v].name);
        free((char *)values[v].op);
        free((int32_t *)values[v].operands);
        tp_plugin_attr *attrs = (tp_plugin_attr *)values[v].attrs;
        for (int32_t a = 0; attrs && a < values[v].num_attrs; a++) {
            free((char *)attrs[a].name);
            free((int64_t *)attrs[a].ints);
            free((void *)attrs[a].data);
        }
        free(attrs);
    }
    free(values);
    free((tp_plugin_node *)g->nodes);
    free((char *)g->name);
    free((int32_t *)g->inputs);
    free((int32_t *)g->outputs);
    char **symbols = (char **)g->symbols;
    for (int32_t s = 0; symbols && s < g->num_symbols; s++) free(symbols[s]);
    free(symbols);
    memset(g, 0, sizeof *g);
}

int32_t stax_graph_copy(const tp_plugin_graph *src, tp_plugin_graph *dst) {
    memset(dst, 0, sizeof *dst);
    dst->struct_size = sizeof *dst;
    bool ok = true;
    dst->name = dup_text(src->name ? src->name : "graph");
    tp_plugin_value *values = calloc((size_t)src->num_values + 1, sizeof *values);
    dst->values = values;
    dst->num_values = values ? src->num_values : 0;
    ok = dst->name && values;
    for (int32_t v = 0; ok && v < src->num_values; v++) {
        const tp_plugin_value *from = &src->values[v];
        tp_plugin_value *to = &values[v];
        *to = *from;
        to->name = dup_text(from->name);
        to->op = dup_text(from->op);
        to->operands = dup_bytes(from->operands, sizeof(int32_t) * (size_t)from->num_operands);
        tp_plugin_attr *attrs =
            from->num_attrs ? calloc((size_t)from->num_attrs, sizeof *attrs) : NULL;
        to->attrs = attrs;
        to->num_attrs = attrs ? from->num_attrs : 0;
        ok = (!from->name || to->name) && (!from->op || to->op) &&
             (!from->num_operands || to->operands) && (!from->num_attrs || attrs);
        for (int32_t a = 0; ok && a < to->num_attrs; a++) {
            const tp_plugin_attr *fa = &from->attrs[a];
            attrs[a] = *fa;
            attrs[a].name = dup_text(fa->name);
            size_t ints = fa->type == TP_PLUGIN_ATTR_INTS || fa->type == TP_PLUGIN_ATTR_TENSOR
                              ? (size_t)(fa->count > 0 ? fa->count : 0)
                              : 0;
            attrs[a].ints = ints ? dup_bytes(fa->ints, sizeof(int64_t) * ints) : NULL;
            attrs[a].data =
                fa->type == TP_PLUGIN_ATTR_TENSOR ? dup_bytes(fa->data, fa->nbytes) : NULL;
            ok = (!fa->name || attrs[a].name) && (!ints || !fa->ints || attrs[a].ints) &&
                 (fa->type != TP_PLUGIN_ATTR_TENSOR || !fa->nbytes || !fa->data || attrs[a].data);
        }
    }
    if (ok && tpcommon_graph_has_nodes(src)) {
        dst->nodes = dup_bytes(src->nodes, sizeof(tp_plugin_node) * (size_t)src->num_values);
        ok = !src->num_values || dst->nodes;
    }
    if (ok) {
        dst->num_inputs = src->num_inputs;
        dst->inputs = dup_bytes(src->inputs, sizeof(int32_t) * (size_t)src->num_inputs);
        dst->num_outputs = src->num_outputs;
        dst->outputs = dup_bytes(src->outputs, sizeof(int32_t) * (size_t)src->num_outputs);
        ok = (!src->num_inputs || dst->inputs) && (!src->num_outputs || dst->outputs);
    }
    int32_t num_symbols = TP_PLUGIN_HAS_FIELD(src, tp_plugin_graph, symbols) ? src->num_symbols : 0;
    if (ok && num_symbols > 0) {
        char **symbols = calloc((size_t)num_symbols, sizeof *symbols);
        dst->symbols = (const char *const *)symbols;
        dst->num_symbols = symbols ? num_symbols : 0;
        ok = symbols != NULL;
        for (int32_t s = 0; ok && s < num_symbols; s++) {
            symbols[s] = dup_text(src->symbols && src->symbols[s] ? src->symbols[s] : "?");
            ok = symbols[s] != NULL;
        }
    }
    if (!ok) stax_graph_free(dst);
    return ok ? TP_PLUGIN_OK : TP_PLUGIN_ERROR;
}

/* ---- symbols ---- */

bool stax_graph_is_dynamic(const tp_plugin_graph *g) {
    if (!TP_PLUGIN_HAS_FIELD(g, tp_plugin_graph, symbols) || g->num_symbols <= 0) return false;
    for (int32_t v = 0; v < g->num_values; v++)
        for (int32_t d = 0; d < g->values[v].type.ndim; d++)
            if (g->values[v].type.dims[d] < 0) return true;
    return false;
}

/* ---- IR text: integers and the rest ---- */

static bool ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '%' || c == '@' || c == '$' || c == '"' || c == '#';
}

/* Splits `ir` into its skeleton (every standalone integer replaced by \x01)
 * and the integers in order. */
static int32_t split_numbers(const char *ir, tpcommon_buf *skeleton, int64_t **numbers,
                             int32_t *count) {
    int32_t capacity = 0;
    *numbers = NULL;
    *count = 0;
    for (size_t i = 0; ir[i];) {
        size_t start = i;
        bool neg = ir[i] == '-';
        size_t digits = neg ? i + 1 : i;
        bool standalone =
            ir[digits] >= '0' && ir[digits] <= '9' && (start == 0 || !ident_char(ir[start - 1]));
        if (standalone) {
            size_t end = digits;
            while (ir[end] >= '0' && ir[end] <= '9') end++;
            char after = ir[end];
            standalone = !(after == '.' || after == 'x' || after == 'e' || after == '_' ||
                           (after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z'));
            if (standalone) {
                if (*count == capacity) {
                    capacity = capacity ? capacity * 2 : 256;
                    int64_t *grown = realloc(*numbers, sizeof *grown * (size_t)capacity);
                    if (!grown) return TP_PLUGIN_ERROR;
                    *numbers = grown;
                }
                (*numbers)[(*count)++] = strtoll(ir + start, NULL, 10);
                tpcommon_buf_append(skeleton, "\x01");
                i = end;
                continue;
            }
            /* not a number token: copy through the digits */
            tpcommon_buf_printf(skeleton, "%.*s", (int)(end - start), ir + start);
            i = end;
            continue;
        }
        size_t end = i + 1;
        while (ir[end] && !((ir[end] == '-' || (ir[end] >= '0' && ir[end] <= '9')) &&
                            !ident_char(ir[end - 1])))
            end++;
        tpcommon_buf_printf(skeleton, "%.*s", (int)(end - start), ir + start);
        i = end;
    }
    return skeleton->failed ? TP_PLUGIN_ERROR : TP_PLUGIN_OK;
}

void stax_dynamic_free(stax_dynamic *d) {
    if (!d) return;
    stax_graph_free(&d->graph);
    free(d->decisions.taken);
    free(d->skeleton);
    free(d->numbers);
    free(d->is_param);
    free(d->symbols);
    free(d->params);
    memset(d, 0, sizeof *d);
}

/* Two generic bindings: distinct, not 0 or 1, unlike static sizes. */
static void generic_symbols(int32_t n, int which, int64_t *out) {
    for (int32_t s = 0; s < n; s++) out[s] = which ? 211 + 6 * s : 101 + 4 * s;
}

int32_t stax_dynamic_prepare(const tp_plugin_graph *graph, const char *cpu, const char *features,
                             stax_dynamic *d, char **template_ir, char *error, size_t error_size) {
    memset(d, 0, sizeof *d);
    *template_ir = NULL;
    if (stax_graph_copy(graph, &d->graph) != TP_PLUGIN_OK)
        return tpcommon_error(error, error_size, "stax: out of memory copying graph '%s'",
                              graph->name);
    int32_t n = d->graph.num_symbols;
    int64_t *g1 = calloc((size_t)n + 1, sizeof *g1), *g2 = calloc((size_t)n + 1, sizeof *g2);
    d->symbols = calloc((size_t)n + 1, sizeof *d->symbols);
    stax_program p1, p2;
    memset(&p1, 0, sizeof p1);
    memset(&p2, 0, sizeof p2);
    stax_decisions second = {0};
    tpcommon_buf s1, s2, out;
    tpcommon_buf_init(&s1);
    tpcommon_buf_init(&s2);
    tpcommon_buf_init(&out);
    int64_t *n2 = NULL;
    int32_t c2 = 0;
    int32_t status = g1 && g2 && d->symbols ? TP_PLUGIN_OK : TP_PLUGIN_ERROR;
    if (status != TP_PLUGIN_OK) tpcommon_error(error, error_size, "stax: out of memory");
    if (status == TP_PLUGIN_OK) {
        generic_symbols(n, 0, g1);
        generic_symbols(n, 1, g2);
        d->decisions.mode = 1;
        second.mode = 1;
        stax_build_mode m1 = {g1, &d->decisions}, m2 = {g2, &second};
        status = stax_program_build(d->host, &d->graph, NULL, 0, cpu, features, &m1, 1, &p1, error,
                                    error_size);
        if (status == TP_PLUGIN_OK)
            status = stax_program_build(d->host, &d->graph, NULL, 0, cpu, features, &m2, 1, &p2,
                                        error, error_size);
    }
    bool same = status == TP_PLUGIN_OK && !d->decisions.failed && !second.failed &&
                second.count == d->decisions.count &&
                (!second.count || !memcmp(second.taken, d->decisions.taken, (size_t)second.count));
    if (same) {
        same = split_numbers(p1.ir, &s1, &d->numbers, &d->num_numbers) == TP_PLUGIN_OK &&
               split_numbers(p2.ir, &s2, &n2, &c2) == TP_PLUGIN_OK && c2 == d->num_numbers &&
               s1.data && s2.data && !strcmp(s1.data, s2.data);
    }
    if (same) {
        d->is_param = calloc((size_t)d->num_numbers + 1, 1);
        same = d->is_param != NULL;
        for (int32_t i = 0; same && i < d->num_numbers; i++)
            if (d->numbers[i] != n2[i]) {
                d->is_param[i] = 1;
                d->num_params++;
            }
        d->params = calloc((size_t)d->num_params + 1, sizeof *d->params);
        same = same && d->params;
    }
    if (same) {
        /* the template: p1's text, size integers replaced by %P<k>, loaded at body entry */
        const char *skel = s1.data;
        int32_t number = 0, param = 0;
        size_t marker = strlen(STAX_PARAMS_MARKER);
        for (size_t i = 0; skel[i]; i++) {
            if (skel[i] == '\x01') {
                if (d->is_param[number])
                    tpcommon_buf_printf(&out, "%%P%d", (int)param++);
                else
                    tpcommon_buf_printf(&out, "%lld", (long long)d->numbers[number]);
                number++;
            } else if (!strncmp(skel + i, STAX_PARAMS_MARKER, marker)) {
                for (int32_t k = 0; k < d->num_params; k++)
                    tpcommon_buf_printf(&out,
                                        "  %%PA%d = getelementptr i64, ptr %%params, i64 %d\n"
                                        "  %%P%d = load i64, ptr %%PA%d\n",
                                        (int)k, (int)k, (int)k, (int)k);
                i += marker - 1;
            } else {
                char c[2] = {skel[i], 0};
                tpcommon_buf_append(&out, c);
            }
        }
        d->skeleton = tpcommon_buf_take(&s1);
        *template_ir = tpcommon_buf_take(&out);
        same = d->skeleton && *template_ir;
    }
    if (status == TP_PLUGIN_OK && !same) status = TP_PLUGIN_UNAVAILABLE; /* use the static path */
    free(g1);
    free(g2);
    free(n2);
    free(second.taken);
    stax_program_free(&p1);
    stax_program_free(&p2);
    tpcommon_buf_free(&s1);
    tpcommon_buf_free(&s2);
    tpcommon_buf_free(&out);
    if (status != TP_PLUGIN_OK) {
        free(*template_ir);
        *template_ir = NULL;
        stax_dynamic_free(d);
    }
    return status;
}

int32_t stax_dynamic_plan(stax_dynamic *d, const int64_t *symbols, const char *cpu,
                          const char *features, stax_program *out, char *error, size_t error_size) {
    d->decisions.mode = 2;
    d->decisions.cursor = 0;
    d->decisions.failed = false;
    stax_build_mode mode = {symbols, &d->decisions};
    int32_t status = stax_program_build(d->host, &d->graph, NULL, 0, cpu, features, &mode, 1, out,
                                        error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    tpcommon_buf skeleton;
    tpcommon_buf_init(&skeleton);
    int64_t *numbers = NULL;
    int32_t count = 0;
    bool same = !d->decisions.failed && d->decisions.cursor == d->decisions.count &&
                split_numbers(out->ir, &skeleton, &numbers, &count) == TP_PLUGIN_OK &&
                count == d->num_numbers && skeleton.data && !strcmp(skeleton.data, d->skeleton);
    int32_t param = 0;
    for (int32_t i = 0; same && i < count; i++) {
        if (d->is_param[i])
            d->params[param++] = numbers[i];
        else if (numbers[i] != d->numbers[i])
            same = false;
    }
    free(numbers);
    tpcommon_buf_free(&skeleton);
    free(out->ir);
    out->ir = NULL;
    if (!same) {
        stax_program_free(out);
        return tpcommon_error(
            error, error_size,
            "stax: graph '%s': these sizes change the structure of the compiled "
            "code (a size the generic plan treats as a variable is a special case "
            "here); compile again for them",
            d->graph.name);
    }
    memcpy(d->symbols, symbols, sizeof *symbols * (size_t)d->graph.num_symbols);
    d->bound = true;
    return TP_PLUGIN_OK;
}
