/* gen_op_reference: writes the op reference (share/doc/tensorplay/ops.txt
 * and the man page tensorplay-ops(7)) from the op table itself, so every op
 * of core/ops/op_list.def appears, with its operands, attributes and their
 * defaults (TP_ATTRS_INIT), and the dtypes its rule accepts (found by asking
 * the graph builder). The prose comes from docs/ops/semantics.txt, one
 * "[op]" section per op; an op without one is an error that names it.
 *
 *   gen_op_reference SEMANTICS.txt OUT.txt OUT.7
 *
 * Built and run at build time only (docs/CMakeLists.txt); never installed. */
#define _DEFAULT_SOURCE /* strsep */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/attr_defaults.h"
#include "ops/attr_info.h"
#include "ops/op_table.h"
#include "tensorplay/graph.h"
#include "tensorplay/tensor.h"

#define MAX_SECTION 8192

typedef struct semantics {
    char *text[TP_OP_COUNT];
    char *preface; /* the text before the first [op] section */
} semantics;

static char *read_file(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = calloc((size_t)size + 1, 1);
    if (text && fread(text, 1, (size_t)size, file) != (size_t)size) text[0] = '\0';
    fclose(file);
    return text;
}

/* Splits the file into "[name]" sections; false (with a message) on an
 * unknown op name. */
static bool load_semantics(const char *path, semantics *out) {
    char *text = read_file(path);
    if (!text) {
        fprintf(stderr, "gen_op_reference: cannot read %s\n", path);
        return false;
    }
    memset(out, 0, sizeof *out);
    char **current = &out->preface;
    char *rest = text;
    for (char *line = strsep(&rest, "\n"); line; line = strsep(&rest, "\n")) {
        if (!rest && !*line) break; /* after the last newline */
        size_t length = strlen(line);
        if (length > 1 && line[0] == '[' && line[length - 1] == ']') {
            line[length - 1] = '\0';
            const tp_op_def *op = tp_op_find(line + 1);
            if (!op) {
                fprintf(stderr, "gen_op_reference: %s: section [%s] names no op of the table\n",
                        path, line + 1);
                free(text);
                return false;
            }
            current = &out->text[op->id];
            continue;
        }
        size_t used = *current ? strlen(*current) : 0;
        *current = realloc(*current, used + length + 2);
        memcpy(*current + used, line, length);
        (*current)[used + length] = '\n';
        (*current)[used + length + 1] = '\0';
    }
    free(text); /* the sections are copies */
    return true;
}

static void free_semantics(semantics *prose) {
    for (int id = 0; id < TP_OP_COUNT; id++) free(prose->text[id]);
    free(prose->preface);
}

/* The attribute's default as .tpir and the bindings apply it (attr_defaults.c). */
static void default_text(const tp_op_def *op, tp_attr_key key, char *out, size_t size) {
    const char *fallback = tp_op_def_attr_default(op, key);
    if (!fallback)
        snprintf(out, size, "none (required)");
    else if (strcmp(fallback, TP_ATTR_DEFAULT_FROM_RESULT) == 0)
        snprintf(out, size, "%s",
                 key == TP_ATTR_DTYPE ? "the result type's dtype"
                                      : "the result type's dims (when static)");
    else
        snprintf(out, size, "%s", fallback);
}

static const char *attr_type_text(tp_attr_type type) {
    static const char *const names[] = {"ints",  "bool",      "int",    "float",
                                        "dtype", "none|tanh", "tensor", "enum"};
    return names[type];
}

/* An ENUM key's type: its names joined by '|' ("constant|reflect|..."). */
static const char *attr_key_type_text(const tp_attr_info *info, char *out, size_t size) {
    if (info->type != TP_ATTR_TYPE_ENUM) return attr_type_text(info->type);
    out[0] = '\0';
    for (int i = 0; info->names[i]; i++) {
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", i ? "|" : "", info->names[i]);
    }
    return out;
}

/* The operands and attributes one probe of the op's rule uses: shapes that
 * every op of its kind accepts, all operands of `dtype`. */
static bool probe(const tp_op_def *op, tp_dtype dtype) {
    tp_graph *graph = NULL;
    if (tp_graph_create("probe", &graph) != TP_OK) return false;
    tp_attrs attrs = TP_ATTRS_INIT;
    int64_t dims[5][2] = {{2, 3}, {2, 3}, {2, 3}, {2, 3}, {2, 3}};
    int ranks[5] = {2, 2, 2, 2, 2};
    int arity = op->min_arity;
    tp_tensor *data = NULL;
    if (op->id == TP_OP_MATMUL) dims[1][0] = 3, dims[1][1] = 4;
    if (op->id == TP_OP_LINEAR) dims[1][0] = 4; /* weight [out, in] */
    if (op->id == TP_OP_RESHAPE) attrs.shape_ndim = 1, attrs.shape[0] = 6;
    if (op->id == TP_OP_EXPAND) attrs.shape_ndim = 2, attrs.shape[0] = 2, attrs.shape[1] = 3;
    if (op->id == TP_OP_PERMUTE) attrs.nperm = 2, attrs.perm[0] = 1, attrs.perm[1] = 0;
    if (op->id == TP_OP_TRANSPOSE) attrs.dim0 = 0, attrs.dim1 = 1;
    if (op->id == TP_OP_SQUEEZE) dims[0][0] = 1;
    if (op->id == TP_OP_FULL) attrs.shape_ndim = 1, attrs.shape[0] = 2, attrs.dtype = dtype;
    if (op->id == TP_OP_ARANGE) attrs.range_stop = 3, attrs.dtype = dtype;
    if (op->id == TP_OP_CAST) attrs.dtype = TP_F32;
    if (op->id == TP_OP_PAD) attrs.npad_before = attrs.npad_after = 2, attrs.pad_after[1] = 1;
    if (op->id == TP_OP_RESIZE) {
        attrs.mode = TP_MODE_NEAREST;
        attrs.shape_ndim = 2, attrs.shape[0] = 4, attrs.shape[1] = 6;
    }
    if (op->id == TP_OP_BATCH_NORM) /* parameters [C], C = 3 */
        for (int i = 1; i < 5; i++) ranks[i] = 1, dims[i][0] = 3;
    if (op->id == TP_OP_CONSTANT) {
        int64_t shape[1] = {2};
        if (tp_tensor_create(dtype, 1, shape, &data) != TP_OK) {
            tp_graph_destroy(graph);
            return false;
        }
        attrs.data = data;
    }
    tp_value_id inputs[5], result;
    bool ok = true;
    for (int i = 0; i < arity && ok; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        tp_type type = {.dtype = dtype, .ndim = ranks[i]};
        type.dims[0] = dims[i][0], type.dims[1] = dims[i][1];
        ok = tp_graph_add_input(graph, name, &type, &inputs[i]) == TP_OK;
    }
    ok = ok && tp_graph_add_node(graph, op->name, inputs, arity, &attrs, "y", &result) == TP_OK;
    tp_graph_destroy(graph);
    if (data) tp_tensor_release(data);
    return ok;
}

static void dtypes_text(const tp_op_def *op, char *out, size_t size) {
    out[0] = '\0';
    for (int d = 0; d < TP_DTYPE_COUNT; d++)
        if (probe(op, (tp_dtype)d)) {
            size_t used = strlen(out);
            snprintf(out + used, size - used, "%s%s", used ? ", " : "", tp_dtype_name((tp_dtype)d));
        }
    if (!out[0]) snprintf(out, size, "(none accepted by the probe)");
}

static void arity_text(const tp_op_def *op, char *out, size_t size) {
    if (op->min_arity == op->max_arity)
        snprintf(out, size, "%d", op->min_arity);
    else
        snprintf(out, size, "%d to %d", op->min_arity, op->max_arity);
}

/* Man-page text: a leading '.' or '\'' would be a request; backslashes escape. */
static void man_text(FILE *out, const char *text) {
    bool line_start = true;
    for (const char *c = text; *c; c++) {
        if (line_start && (*c == '.' || *c == '\'')) fputs("\\&", out);
        if (*c == '\\')
            fputs("\\e", out);
        else if (*c == '-')
            fputs("\\-", out);
        else
            fputc(*c, out);
        line_start = *c == '\n';
    }
}

static void write_op(FILE *text, FILE *man, const tp_op_def *op, const char *prose) {
    char arity[32], dtypes[256];
    arity_text(op, arity, sizeof arity);
    dtypes_text(op, dtypes, sizeof dtypes);
    fprintf(text, "%s\n", op->name);
    fprintf(text, "    kind: %s; tensor operands: %s\n", tp_op_kind_name(op->kind), arity);
    fprintf(man, ".SS %s\n.PP\nKind: %s; tensor operands: %s.\n", op->name,
            tp_op_kind_name(op->kind), arity);
    for (int key = 0; key < TP_ATTR_KEY_COUNT; key++) {
        if (!(op->attr_mask & TP_ATTR_BIT(key))) continue;
        const tp_attr_info *info = tp_attr_info_get((tp_attr_key)key);
        char fallback[64];
        default_text(op, (tp_attr_key)key, fallback, sizeof fallback);
        char type_text[160];
        const char *type_name = attr_key_type_text(info, type_text, sizeof type_text);
        fprintf(text, "    attribute %s: %s, default %s\n", info->name, type_name, fallback);
        fprintf(man, ".br\nAttribute \\fB%s\\fR: %s, default ", info->name, type_name);
        man_text(man, fallback);
        fputs(".\n", man);
    }
    fprintf(text, "    dtypes (every operand of one dtype): %s\n", dtypes);
    fprintf(man, ".br\nDtypes (every operand of one dtype): %s.\n.PP\n", dtypes);
    for (const char *line = prose; *line;) {
        const char *end = strchr(line, '\n');
        fprintf(text, "    %.*s\n", (int)(end - line), line);
        line = end + 1;
    }
    fputs("\n", text);
    man_text(man, prose);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: gen_op_reference SEMANTICS.txt OUT.txt OUT.7\n");
        return 2;
    }
    semantics prose;
    if (!load_semantics(argv[1], &prose)) return 1;
    int missing = 0;
    for (int id = 0; id < TP_OP_COUNT; id++)
        if (!prose.text[id]) {
            fprintf(stderr, "gen_op_reference: %s has no [%s] section: describe the op there\n",
                    argv[1], tp_op_table[id].name);
            missing++;
        }
    if (missing) {
        free_semantics(&prose);
        return 1;
    }
    FILE *text = fopen(argv[2], "w"), *man = fopen(argv[3], "w");
    if (!text || !man) {
        fprintf(stderr, "gen_op_reference: cannot write %s or %s\n", argv[2], argv[3]);
        return 1;
    }
    fprintf(text, "TensorPlay ops (%s): every op of the op table\n\n", tp_version());
    fprintf(man, ".TH TENSORPLAY-OPS 7 \"\" \"TensorPlay %s\" \"TensorPlay\"\n", tp_version());
    fputs(".SH NAME\ntensorplay-ops \\- the operations of TensorPlay graphs\n.SH DESCRIPTION\n",
          man);
    if (prose.preface) {
        fputs(prose.preface, text);
        fputs("\n", text);
        man_text(man, prose.preface);
    }
    fputs(".SH OPERATIONS\n", man);
    for (int id = 0; id < TP_OP_COUNT; id++) write_op(text, man, &tp_op_table[id], prose.text[id]);
    fputs(".SH SEE ALSO\n.BR tpc (1),\n.BR tp-backends (1)\n", man);
    bool ok = fclose(text) == 0;
    ok = fclose(man) == 0 && ok;
    free_semantics(&prose);
    return ok ? 0 : 1;
}
