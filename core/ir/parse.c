/* The .tpir reader: a hand-written lexer and parser for the text print.c
 * writes (grammar in docs/tpir.md), plus tp_graph_load.
 *
 * The parser reads untrusted bytes (it is fuzzed): it never reads past
 * `length`, needs no NUL terminator, has no recursion (the grammar is flat),
 * and every count it keeps is bounded by the limits in graph_internal.h.
 * Errors read "FILE:LINE:COL: expected ..., found ..."; LINE and COL are
 * 1-based and count bytes. What is checked where:
 *   lexer       characters that start no token
 *   header      graph name, input names (fresh), input types
 *   each node   fresh name, written type, known op (did you mean ...),
 *               defined operands, arity, attributes (known to the op, once
 *               each, all present, right value type), operand types that fit
 *               the op, and the written type equal to the inferred one
 *   end         a `return` of defined values, '}' and nothing after it
 * The finished graph is verified (tp_graph_verify). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "graph_internal.h"
#include "ops/attr_defaults.h"
#include "ops/attr_info.h"

#define MAX_NUMBER_TEXT 64           /* longer number tokens are rejected */
#define MAX_DIM_SIZE    2147483647LL /* a written size must fit in 31 bits */

typedef enum token_kind {
    TOKEN_END,     /* end of input */
    TOKEN_IDENT,   /* [A-Za-z_][A-Za-z0-9_]* */
    TOKEN_VALUE,   /* %[A-Za-z0-9_.]* (text excludes the '%') */
    TOKEN_NUMBER,  /* [-+.0-9] then [A-Za-z0-9_.], and +- right after e/E */
    TOKEN_PUNCT,   /* one of ( ) [ ] { } , : = */
    TOKEN_INVALID, /* a byte that starts no token */
} token_kind;

typedef struct token {
    token_kind kind;
    const char *text;
    size_t length;
    size_t line, column;
} token;

typedef struct parser {
    const char *text;
    size_t length, position;
    size_t line, line_start;
    const char *filename;
    token current;
    tp_graph *graph;
    size_t *definition_lines; /* line where each value id was defined */
    int32_t definition_capacity;
} parser;

/* ---- lexer ------------------------------------------------------------------ */

static bool is_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
static bool is_word(char c) {
    return is_letter(c) || is_digit(c);
}

static void skip_space_and_comments(parser *p) {
    while (p->position < p->length) {
        char c = p->text[p->position];
        if (c == '\n') {
            p->position++;
            p->line++;
            p->line_start = p->position;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            p->position++;
        } else if (c == '#') {
            while (p->position < p->length && p->text[p->position] != '\n') p->position++;
        } else {
            return;
        }
    }
}

static void next_token(parser *p) {
    skip_space_and_comments(p);
    token *t = &p->current;
    t->text = p->text + p->position;
    t->line = p->line;
    t->column = p->position - p->line_start + 1;
    t->length = 0;
    if (p->position >= p->length) {
        t->kind = TOKEN_END;
        return;
    }
    size_t start = p->position;
    char c = p->text[start];
    size_t end = start + 1;
    if (c == '%') {
        t->kind = TOKEN_VALUE;
        while (end < p->length && (is_word(p->text[end]) || p->text[end] == '.')) end++;
        t->text++; /* the name, without '%' */
        start++;
    } else if (is_letter(c)) {
        t->kind = TOKEN_IDENT;
        while (end < p->length && is_word(p->text[end])) end++;
    } else if (is_digit(c) || c == '-' || c == '+' || c == '.') {
        t->kind = TOKEN_NUMBER;
        while (end < p->length) {
            char d = p->text[end];
            char previous = p->text[end - 1];
            bool exponent_sign = (d == '+' || d == '-') && (previous == 'e' || previous == 'E');
            if (!is_word(d) && d != '.' && !exponent_sign) break;
            end++;
        }
    } else if (c != '\0' && strchr("()[]{},:=", c)) {
        t->kind = TOKEN_PUNCT;
    } else {
        t->kind = TOKEN_INVALID;
    }
    t->length = end - start;
    p->position = end;
}

static bool token_is(const token *t, token_kind kind, const char *text) {
    size_t length = strlen(text);
    return t->kind == kind && t->length == length && memcmp(t->text, text, length) == 0;
}

static bool at_punct(const parser *p, char c) {
    return p->current.kind == TOKEN_PUNCT && p->current.text[0] == c;
}

/* ---- errors ------------------------------------------------------------------- */

/* "'text'" (at most 40 bytes shown), "end of file", or "byte 0x01". */
static const char *describe(const token *t, char *buffer, size_t size) {
    if (t->kind == TOKEN_END) return "end of file";
    if (t->kind == TOKEN_INVALID &&
        ((unsigned char)t->text[0] < 0x20 || (unsigned char)t->text[0] >= 0x7f)) {
        unsigned char first = (unsigned char)t->text[0]; /* INVALID tokens are 1 byte */
        snprintf(buffer, size, "byte 0x%02x", first);
        return buffer;
    }
    const char *prefix = t->kind == TOKEN_VALUE ? "%" : "";
    int shown = t->length > 40 ? 40 : (int)t->length;
    snprintf(buffer, size, "'%s%.*s%s'", prefix, shown, t->text, t->length > 40 ? "..." : "");
    return buffer;
}

static tp_status fail_at(parser *p, const token *t, const char *format, ...) TP_PRINTF(3, 4);
static tp_status fail_at(parser *p, const token *t, const char *format, ...) {
    char message[TP_ERROR_MESSAGE_MAX];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    return tp_error_set(TP_ERR_PARSE, "%s:%zu:%zu: %s", p->filename, t->line, t->column, message);
}

/* "expected WHAT, found <current token>". */
static tp_status expected(parser *p, const char *what) {
    char found[80];
    return fail_at(p, &p->current, "expected %s, found %s", what,
                   describe(&p->current, found, sizeof found));
}

static tp_status expect_punct(parser *p, char c) {
    if (!at_punct(p, c)) {
        char what[8] = {'\'', c, '\'', '\0'};
        return expected(p, what);
    }
    next_token(p);
    return TP_OK;
}

/* Copies an IDENT or VALUE name into `out` (TP_IR_NAME_MAX + 1 bytes). */
static bool copy_name(const token *t, char *out) {
    if (t->length == 0 || t->length > TP_IR_NAME_MAX) return false;
    memcpy(out, t->text, t->length);
    out[t->length] = '\0';
    return true;
}

/* ---- numbers -------------------------------------------------------------------- */

static bool token_text(const token *t, char *out) {
    if (t->kind != TOKEN_NUMBER || t->length >= MAX_NUMBER_TEXT) return false;
    memcpy(out, t->text, t->length);
    out[t->length] = '\0';
    return true;
}

static bool parse_int_token(const token *t, int64_t *out) {
    char text[MAX_NUMBER_TEXT];
    if (!token_text(t, text)) return false;
    for (const char *c = text; *c; c++)
        if (!is_digit(*c) && !((*c == '-' || *c == '+') && c == text)) return false;
    if (!is_digit(text[text[0] == '-' || text[0] == '+'])) return false;
    errno = 0;
    char *end;
    long long value = strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0') return false;
    *out = value;
    return true;
}

/* A float: a number token, or inf / nan with an optional sign. */
static bool parse_float_token(const token *t, double *out) {
    if (t->kind == TOKEN_IDENT) {
        if (token_is(t, TOKEN_IDENT, "inf")) return (*out = INFINITY), true;
        if (token_is(t, TOKEN_IDENT, "nan")) return (*out = NAN), true;
        return false;
    }
    char text[MAX_NUMBER_TEXT];
    if (!token_text(t, text)) return false;
    const char *body = text + (text[0] == '-' || text[0] == '+');
    double sign = text[0] == '-' ? -1.0 : 1.0;
    if (strcmp(body, "inf") == 0) return (*out = sign * INFINITY), true;
    if (strcmp(body, "nan") == 0) return (*out = NAN), true;
    if (!is_digit(body[0]) && !(body[0] == '.' && is_digit(body[1]))) return false;
    for (const char *c = body; *c; c++)
        if (!is_digit(*c) && !strchr(".eE+-", *c)) return false;
    errno = 0;
    char *end;
    double value = strtod(text, &end);
    if (*end != '\0' || (errno == ERANGE && isinf(value))) return false;
    *out = value;
    return true;
}

/* ---- types ------------------------------------------------------------------------- */

static tp_status parse_dtype(parser *p, tp_dtype *out) {
    for (int i = 0; i < TP_DTYPE_COUNT; i++)
        if (token_is(&p->current, TOKEN_IDENT, tp_dtype_name((tp_dtype)i))) {
            *out = (tp_dtype)i;
            next_token(p);
            return TP_OK;
        }
    return expected(p, "a dtype (f32, f64, i32, i64, bool)");
}

static tp_status parse_dim(parser *p, int64_t *out) {
    token *t = &p->current;
    if (t->kind == TOKEN_IDENT) {
        char name[TP_IR_NAME_MAX + 1];
        if (!copy_name(t, name)) return expected(p, "a symbol name of at most 128 bytes");
        tp_status status = tp_graph_symbol(p->graph, name, out);
        if (status != TP_OK) return fail_at(p, t, "%s", tp_last_error());
        next_token(p);
        return TP_OK;
    }
    int64_t size;
    if (!parse_int_token(t, &size) || size < 0 || size > MAX_DIM_SIZE)
        return expected(p, "a size (0 to 2147483647) or a symbol name");
    *out = size;
    next_token(p);
    return TP_OK;
}

static tp_status parse_type(parser *p, tp_type *out) {
    memset(out, 0, sizeof *out);
    TP_TRY(parse_dtype(p, &out->dtype));
    TP_TRY(expect_punct(p, '['));
    if (at_punct(p, ']')) {
        next_token(p);
        return TP_OK;
    }
    for (;;) {
        if (out->ndim == TP_MAX_DIMS) return expected(p, "']' (at most 8 dimensions)");
        TP_TRY(parse_dim(p, &out->dims[out->ndim]));
        out->ndim++;
        if (at_punct(p, ']')) break;
        TP_TRY(expect_punct(p, ','));
    }
    next_token(p);
    return TP_OK;
}

/* ---- values ----------------------------------------------------------------------- */

static tp_status remember_definition(parser *p, tp_value_id id, size_t line) {
    if (id >= p->definition_capacity) {
        int32_t capacity = p->definition_capacity ? p->definition_capacity * 2 : 64;
        while (capacity <= id) capacity *= 2;
        size_t *lines = realloc(p->definition_lines, (size_t)capacity * sizeof *lines);
        if (!lines) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", p->filename);
        p->definition_lines = lines;
        p->definition_capacity = capacity;
    }
    p->definition_lines[id] = line;
    return TP_OK;
}

/* A name being defined: a value token, well formed and not yet used. */
static tp_status parse_new_value_name(parser *p, char *name, token *where) {
    *where = p->current;
    if (p->current.kind != TOKEN_VALUE) return expected(p, "a value name (%name)");
    if (!copy_name(&p->current, name) || !tp_ir_is_value_name(name))
        return expected(p, "a value name (% then words of letters, digits and '_' joined by "
                           "single dots, at most 128 bytes)");
    tp_value_id existing = tp_ir_find_value(p->graph, name);
    if (existing != TP_NO_VALUE) {
        char found[80];
        return fail_at(p, where,
                       "expected a new value name, found %s, which is already defined "
                       "on line %zu",
                       describe(where, found, sizeof found), p->definition_lines[existing]);
    }
    next_token(p);
    return TP_OK;
}

/* A use of a value: it must be defined above. */
static tp_status parse_value_use(parser *p, tp_value_id *out) {
    char name[TP_IR_NAME_MAX + 1];
    if (p->current.kind != TOKEN_VALUE) return expected(p, "a value (%name)");
    tp_value_id id = copy_name(&p->current, name) ? tp_ir_find_value(p->graph, name) : TP_NO_VALUE;
    if (id == TP_NO_VALUE) {
        char found[80];
        return fail_at(p, &p->current,
                       "expected a defined value, found %s, which is not defined "
                       "above",
                       describe(&p->current, found, sizeof found));
    }
    *out = id;
    next_token(p);
    return TP_OK;
}

/* ---- header ------------------------------------------------------------------------ */

static tp_status parse_input(parser *p) {
    char name[TP_IR_NAME_MAX + 1];
    token where;
    TP_TRY(parse_new_value_name(p, name, &where));
    TP_TRY(expect_punct(p, ':'));
    tp_type type;
    TP_TRY(parse_type(p, &type));
    tp_value_id id;
    if (tp_graph_add_input(p->graph, name, &type, &id) != TP_OK)
        return fail_at(p, &where, "%s", tp_last_error());
    return remember_definition(p, id, where.line);
}

static tp_status parse_header(parser *p, tp_graph **graph_out) {
    if (!token_is(&p->current, TOKEN_IDENT, "graph")) return expected(p, "'graph'");
    next_token(p);
    char name[TP_IR_NAME_MAX + 1];
    if (p->current.kind != TOKEN_IDENT || !copy_name(&p->current, name))
        return expected(p, "a graph name (an identifier of at most 128 bytes)");
    TP_TRY(tp_graph_create(name, graph_out));
    p->graph = *graph_out;
    next_token(p);
    TP_TRY(expect_punct(p, '('));
    if (!at_punct(p, ')')) {
        for (;;) {
            TP_TRY(parse_input(p));
            if (at_punct(p, ')')) break;
            TP_TRY(expect_punct(p, ','));
        }
    }
    next_token(p);
    return expect_punct(p, '{');
}

/* ---- attributes -------------------------------------------------------------------------- */

typedef struct node_text {
    char name[TP_IR_NAME_MAX + 1];
    token name_token, type_token, op_token, attrs_end;
    tp_type written;
    const tp_op_def *op;
    tp_value_id operands[TP_IR_MAX_OPERANDS];
    token literals[TP_IR_MAX_OPERANDS]; /* operands written as numbers (kind NUMBER or IDENT) */
    bool is_literal[TP_IR_MAX_OPERANDS];
    int num_operands, num_literals;
    tp_attrs attrs;
    uint32_t seen; /* attribute keys written (or defaulted) */
} node_text;

static tp_status parse_ints(parser *p, tp_attrs *attrs, tp_attr_key key) {
    int32_t *count;
    int64_t *values = tp_attrs_ints_mut(attrs, key, &count);
    TP_TRY(expect_punct(p, '['));
    *count = 0;
    if (at_punct(p, ']')) {
        next_token(p);
        return TP_OK;
    }
    for (;;) {
        if (*count == TP_MAX_DIMS) return expected(p, "']' (at most 8 entries)");
        if (!parse_int_token(&p->current, &values[*count]))
            return expected(p, "an integer (64-bit)");
        (*count)++;
        next_token(p);
        if (at_punct(p, ']')) break;
        TP_TRY(expect_punct(p, ','));
    }
    next_token(p);
    return TP_OK;
}

static tp_status parse_int_attr(parser *p, int64_t *out) {
    if (token_is(&p->current, TOKEN_IDENT, "end")) {
        *out = TP_SLICE_END;
    } else if (!parse_int_token(&p->current, out)) {
        return expected(p, "an integer (64-bit) or 'end'");
    }
    next_token(p);
    return TP_OK;
}

static tp_status parse_float_attr(parser *p, double *out) {
    if (!parse_float_token(&p->current, out)) return expected(p, "a number");
    next_token(p);
    return TP_OK;
}

/* One element of a constant payload, stored at `slot` in the dtype. */
static tp_status parse_element(parser *p, tp_dtype dtype, void *slot) {
    const token *t = &p->current;
    int64_t integer;
    double real;
    char text[MAX_NUMBER_TEXT];
    switch (dtype) {
    case TP_F32:
        if (!parse_float_token(t, &real)) return expected(p, "a number for an f32 element");
        /* Read the text as a float directly: no double rounding. */
        *(float *)slot = token_text(t, text) ? strtof(text, NULL) : (float)real;
        if (isinf(*(float *)slot) && !isinf(real))
            return expected(p, "a number in f32 range for an f32 element");
        break;
    case TP_F64:
        if (!parse_float_token(t, &real)) return expected(p, "a number for an f64 element");
        *(double *)slot = real;
        break;
    case TP_I32:
        if (!parse_int_token(t, &integer) || integer < INT32_MIN || integer > INT32_MAX)
            return expected(p, "an integer in i32 range for an i32 element");
        *(int32_t *)slot = (int32_t)integer;
        break;
    case TP_I64:
        if (!parse_int_token(t, &integer)) return expected(p, "an integer for an i64 element");
        *(int64_t *)slot = integer;
        break;
    default:
        if (token_is(t, TOKEN_IDENT, "true") || token_is(t, TOKEN_NUMBER, "1"))
            *(uint8_t *)slot = 1;
        else if (token_is(t, TOKEN_IDENT, "false") || token_is(t, TOKEN_NUMBER, "0"))
            *(uint8_t *)slot = 0;
        else
            return expected(p, "0, 1, true or false for a bool element");
        break;
    }
    next_token(p);
    return TP_OK;
}

/* The constant payload: exactly numel(written type) elements. */
static tp_status parse_payload(parser *p, node_text *node) {
    const tp_type *type = &node->written;
    int64_t count = 1;
    for (int i = 0; i < type->ndim; i++) {
        if (TP_DIM_IS_SYMBOL(type->dims[i]))
            return fail_at(p, &node->type_token,
                           "expected a static type for a constant, found symbol '%s'",
                           tp_graph_symbol_name(p->graph, type->dims[i]));
        count *= type->dims[i];
        if (count > TP_IR_MAX_CONSTANT)
            return fail_at(p, &node->type_token,
                           "expected a constant of at most %d elements, found a larger type",
                           TP_IR_MAX_CONSTANT);
    }
    size_t element_size = tp_dtype_size(type->dtype);
    char *data = tp_malloc((size_t)count * element_size);
    if (!data) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", p->filename);
    tp_status status = expect_punct(p, '[');
    for (int64_t i = 0; status == TP_OK && i < count; i++) {
        if (i) status = at_punct(p, ']') ? TP_ERR_PARSE : expect_punct(p, ',');
        if (status != TP_OK) {
            char what[96];
            snprintf(what, sizeof what, "%lld elements (the size of the type), with ','",
                     (long long)count);
            status = expected(p, what);
            break;
        }
        status = parse_element(p, type->dtype, data + (size_t)i * element_size);
    }
    if (status == TP_OK && !at_punct(p, ']')) {
        char what[96];
        snprintf(what, sizeof what, "']' after %lld elements (the size of the type)",
                 (long long)count);
        status = expected(p, what);
    }
    if (status == TP_OK) {
        next_token(p);
        status = tp_tensor_from_data(type->dtype, type->ndim, type->dims, data, &node->attrs.data);
    }
    free(data);
    return status;
}

/* "axis, start=0, stop=end, step=1": the attributes `op` reads, each with its
 * default when it has one. */
static void describe_attributes(const tp_op_def *op, char *out, size_t size) {
    size_t used = 0;
    out[0] = '\0';
    for (int key = 0; key < TP_ATTR_KEY_COUNT && used < size; key++) {
        if (!(op->attr_mask & TP_ATTR_BIT(key))) continue;
        const char *fallback = tp_op_def_attr_default(op, (tp_attr_key)key);
        const char *name = tp_attr_key_name((tp_attr_key)key);
        int written;
        if (!fallback)
            written = snprintf(out + used, size - used, "%s%s (required)", used ? ", " : "", name);
        else if (strcmp(fallback, TP_ATTR_DEFAULT_FROM_RESULT) == 0)
            written = snprintf(out + used, size - used, "%s%s (default from the result type)",
                               used ? ", " : "", name);
        else
            written =
                snprintf(out + used, size - used, "%s%s=%s", used ? ", " : "", name, fallback);
        if (written < 0) break;
        used += (size_t)written < size - used ? (size_t)written : size - used - 1;
    }
}

/* The value after "key=": its type is the key's. */
static tp_status parse_attribute_value(parser *p, node_text *node, tp_attr_key key) {
    tp_attrs *attrs = &node->attrs;
    const token *t = &p->current;
    switch (tp_attr_info_get(key)->type) {
    case TP_ATTR_TYPE_INTS:
        return parse_ints(p, attrs, key);
    case TP_ATTR_TYPE_BOOL:
        if (!token_is(t, TOKEN_IDENT, "true") && !token_is(t, TOKEN_IDENT, "false"))
            return expected(p, "true or false");
        *tp_attrs_bool_field(attrs, (tp_attr_key)key) = token_is(t, TOKEN_IDENT, "true");
        next_token(p);
        return TP_OK;
    case TP_ATTR_TYPE_INT: {
        int64_t *field = key == TP_ATTR_GROUP   ? &attrs->group
                         : key == TP_ATTR_AXIS  ? &attrs->axis
                         : key == TP_ATTR_DIM0  ? &attrs->dim0
                         : key == TP_ATTR_DIM1  ? &attrs->dim1
                         : key == TP_ATTR_START ? &attrs->start
                         : key == TP_ATTR_STOP  ? &attrs->stop
                                                : &attrs->step;
        return parse_int_attr(p, field);
    }
    case TP_ATTR_TYPE_FLOAT: {
        double *field = key == TP_ATTR_RANGE_START  ? &attrs->range_start
                        : key == TP_ATTR_RANGE_STOP ? &attrs->range_stop
                        : key == TP_ATTR_RANGE_STEP ? &attrs->range_step
                        : key == TP_ATTR_VALUE      ? &attrs->value
                        : key == TP_ATTR_EPS        ? &attrs->eps
                        : key == TP_ATTR_BETA       ? &attrs->beta
                                                    : &attrs->threshold;
        return parse_float_attr(p, field);
    }
    case TP_ATTR_TYPE_DTYPE:
        return parse_dtype(p, &attrs->dtype);
    case TP_ATTR_TYPE_APPROXIMATE:
        if (token_is(t, TOKEN_IDENT, "none"))
            attrs->approximate = TP_GELU_NONE;
        else if (token_is(t, TOKEN_IDENT, "tanh"))
            attrs->approximate = TP_GELU_TANH;
        else
            return expected(p, "none or tanh");
        next_token(p);
        return TP_OK;
    case TP_ATTR_TYPE_TENSOR:
        return parse_payload(p, node);
    }
    return TP_OK;
}

/* key=value for a key `op` declares. */
static tp_status parse_attribute(parser *p, node_text *node) {
    const tp_op_def *op = node->op;
    token key_token = p->current;
    int key = 0;
    for (; key < TP_ATTR_KEY_COUNT; key++)
        if ((op->attr_mask & TP_ATTR_BIT(key)) &&
            token_is(&key_token, TOKEN_IDENT, tp_attr_key_name((tp_attr_key)key)))
            break;
    if (key == TP_ATTR_KEY_COUNT) {
        char known[512], found[80];
        describe_attributes(op, known, sizeof known);
        return fail_at(p, &key_token, "expected an attribute of %s (%s), found %s", op->name,
                       op->attr_mask ? known : "it takes none",
                       describe(&key_token, found, sizeof found));
    }
    if (node->seen & TP_ATTR_BIT(key))
        return fail_at(p, &key_token, "expected each attribute once, found '%s' again",
                       tp_attr_key_name((tp_attr_key)key));
    node->seen |= TP_ATTR_BIT(key);
    next_token(p);
    TP_TRY(expect_punct(p, '='));
    return parse_attribute_value(p, node, (tp_attr_key)key);
}

/* Sets attribute `key`, which the node does not write, to its default: from
 * the written result type, or by parsing the default's text. Returns false
 * when the attribute is required (or its default cannot apply here). */
static bool apply_default(parser *p, node_text *node, tp_attr_key key) {
    const char *fallback = tp_op_def_attr_default(node->op, key);
    if (!fallback) return false;
    if (strcmp(fallback, TP_ATTR_DEFAULT_FROM_RESULT) == 0) {
        if (key == TP_ATTR_DTYPE) {
            node->attrs.dtype = node->written.dtype;
            return true;
        }
        int32_t *count;
        int64_t *values = tp_attrs_ints_mut(&node->attrs, key, &count);
        if (!values) return false;
        for (int i = 0; i < node->written.ndim; i++)
            if (TP_DIM_IS_SYMBOL(node->written.dims[i])) return false;
        *count = node->written.ndim;
        memcpy(values, node->written.dims, (size_t)node->written.ndim * sizeof *values);
        return true;
    }
    /* The default is .tpir text: read it with the same code as written text. */
    parser text = {.text = fallback,
                   .length = strlen(fallback),
                   .line = 1,
                   .filename = "<attribute default>",
                   .graph = p->graph};
    next_token(&text);
    return parse_attribute_value(&text, node, key) == TP_OK && text.current.kind == TOKEN_END;
}

static tp_status parse_attributes(parser *p, node_text *node) {
    const tp_op_def *op = node->op;
    bool written_block = at_punct(p, '{');
    if (written_block) {
        next_token(p);
        while (!at_punct(p, '}')) {
            if (node->seen) TP_TRY(expect_punct(p, ','));
            TP_TRY(parse_attribute(p, node));
        }
        node->attrs_end = p->current;
        next_token(p);
    }
    for (int key = 0; key < TP_ATTR_KEY_COUNT; key++) {
        if (!(op->attr_mask & TP_ATTR_BIT(key)) || (node->seen & TP_ATTR_BIT(key))) continue;
        if (apply_default(p, node, (tp_attr_key)key)) {
            node->seen |= TP_ATTR_BIT(key);
            continue;
        }
        const char *fallback = tp_op_def_attr_default(op, (tp_attr_key)key);
        if (fallback && strcmp(fallback, TP_ATTR_DEFAULT_FROM_RESULT) != 0)
            return fail_at(p, &node->op_token,
                           "internal error: the default '%s' of attribute '%s' of %s does not "
                           "read as its type (core/ops/attr_defaults.c); write the attribute",
                           fallback, tp_attr_key_name((tp_attr_key)key), op->name);
        char known[512], found[80];
        describe_attributes(op, known, sizeof known);
        const char *why = fallback ? ", which has no default when the result type has symbols" : "";
        if (!written_block)
            return fail_at(p, &node->op_token,
                           "expected attributes for %s ({key=value, ...}: %s), found none; "
                           "'%s' is needed%s",
                           op->name, known, tp_attr_key_name((tp_attr_key)key), why);
        return fail_at(p, &node->attrs_end, "expected attribute '%s' of %s%s (%s), found %s",
                       tp_attr_key_name((tp_attr_key)key), op->name, why, known,
                       describe(&node->attrs_end, found, sizeof found));
    }
    return TP_OK;
}

/* ---- nodes --------------------------------------------------------------------------------- */

static tp_status parse_op(parser *p, node_text *node) {
    char name[TP_IR_NAME_MAX + 1];
    node->op_token = p->current;
    if (p->current.kind != TOKEN_IDENT) return expected(p, "an op name");
    node->op = copy_name(&p->current, name) ? tp_op_find(name) : NULL;
    if (!node->op) {
        char found[80];
        const char *suggestion = copy_name(&p->current, name) ? tp_ir_suggest_op(name) : NULL;
        return fail_at(p, &p->current, "expected an op name, found unknown op %s%s%s%s",
                       describe(&p->current, found, sizeof found),
                       suggestion ? " (did you mean '" : "", suggestion ? suggestion : "",
                       suggestion ? "'?)" : "");
    }
    next_token(p);
    return TP_OK;
}

static tp_status parse_operands(parser *p, node_text *node) {
    TP_TRY(expect_punct(p, '('));
    if (at_punct(p, ')')) {
        next_token(p);
        return TP_OK;
    }
    for (;;) {
        if (node->num_operands == TP_IR_MAX_OPERANDS)
            return expected(p, "')' (at most 64 operands)");
        const token *t = &p->current;
        bool literal = t->kind == TOKEN_NUMBER || token_is(t, TOKEN_IDENT, "inf") ||
                       token_is(t, TOKEN_IDENT, "nan") || token_is(t, TOKEN_IDENT, "true") ||
                       token_is(t, TOKEN_IDENT, "false");
        if (literal) {
            node->literals[node->num_operands] = *t;
            node->is_literal[node->num_operands] = true;
            node->operands[node->num_operands] = TP_NO_VALUE;
            node->num_literals++;
            next_token(p);
        } else {
            TP_TRY(parse_value_use(p, &node->operands[node->num_operands]));
        }
        node->num_operands++;
        if (at_punct(p, ')')) break;
        TP_TRY(expect_punct(p, ','));
    }
    next_token(p);
    return TP_OK;
}

/* A parser positioned on token `t` of p's text, reading nothing after it:
 * what an operand literal is read with, so errors point at it. */
static parser parser_at_token(const parser *p, const token *t) {
    size_t position = (size_t)(t->text - p->text);
    parser at = {.text = p->text,
                 .length = position + t->length,
                 .position = position,
                 .line = t->line,
                 .line_start = position - (t->column - 1),
                 .filename = p->filename,
                 .graph = p->graph};
    next_token(&at);
    return at;
}

/* Scalar literals as operands (mul(%x, 0.125)): each becomes a constant of
 * shape [] named NODE.literalK, defined just before the node, with the dtype
 * of the node's first value operand (for where's condition: bool), like a
 * weakly typed Python scalar. Only pointwise ops take literals: elsewhere an
 * operand's dtype does not follow from its neighbours (gather's indices). */
static tp_status define_literals(parser *p, node_text *node) {
    if (!node->num_literals) return TP_OK;
    const tp_op_def *op = node->op;
    bool where = op->flags & TP_OPF_COMPUTE_WHERE;
    int first_value = -1;
    for (int i = where ? 1 : 0; i < node->num_operands && first_value < 0; i++)
        if (!node->is_literal[i]) first_value = i;
    for (int i = 0; i < node->num_operands; i++) {
        if (!node->is_literal[i]) continue;
        const token *t = &node->literals[i];
        char found[80];
        if (op->kind != TP_KIND_POINTWISE)
            return fail_at(p, t,
                           "expected a value (%%name), found the number %s: only pointwise ops "
                           "take numbers as operands; define a constant for %s",
                           describe(t, found, sizeof found), op->name);
        tp_dtype dtype;
        if (where && i == 0)
            dtype = TP_BOOL;
        else if (first_value >= 0)
            dtype = tp_graph_value_type(p->graph, node->operands[first_value])->dtype;
        else
            return fail_at(p, t,
                           "expected at least one value operand of %s to give the number %s its "
                           "dtype, found only numbers; define a constant",
                           op->name, describe(t, found, sizeof found));
        union {
            double f64;
            int64_t i64;
            float f32;
            int32_t i32;
            uint8_t b;
        } element;
        parser at = parser_at_token(p, t);
        if (parse_element(&at, dtype, &element) != TP_OK) {
            const char *dtype_source = where && i == 0 ? "the dtype of where's condition"
                                                       : "the dtype of the other operands";
            return fail_at(p, t, "%s (the number takes %s, %s; write it so, or cast)",
                           strstr(tp_last_error(), "expected") ? strstr(tp_last_error(), "expected")
                                                               : tp_last_error(),
                           dtype_source, tp_dtype_name(dtype));
        }
        tp_tensor *data = NULL;
        TP_TRY(tp_tensor_from_data(dtype, 0, NULL, &element, &data));
        char name[TP_IR_NAME_MAX + 32]; /* NAME.literalK */
        snprintf(name, sizeof name, "%s.literal%d", node->name, i);
        tp_value_id id = TP_NO_VALUE;
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.data = data;
        tp_status status =
            strlen(name) > TP_IR_NAME_MAX || tp_ir_find_value(p->graph, name) != TP_NO_VALUE
                ? fail_at(p, t,
                          "expected a value, found a number whose constant's name "
                          "'%s' is taken or too long; define a constant",
                          name)
                : tp_graph_add_node(p->graph, "constant", NULL, 0, &attrs, name, &id);
        tp_tensor_release(data);
        if (status != TP_OK)
            return status == TP_ERR_PARSE ? status : fail_at(p, t, "%s", tp_last_error());
        TP_TRY(remember_definition(p, id, t->line));
        node->operands[i] = id;
    }
    return TP_OK;
}

static tp_status check_arity(parser *p, const node_text *node) {
    const tp_op_def *op = node->op;
    if (node->num_operands >= op->min_arity && node->num_operands <= op->max_arity) return TP_OK;
    if (op->min_arity == op->max_arity)
        return fail_at(p, &node->op_token, "expected %d operand%s for %s, found %d", op->min_arity,
                       op->min_arity == 1 ? "" : "s", op->name, node->num_operands);
    return fail_at(p, &node->op_token, "expected %d to %d operands for %s, found %d", op->min_arity,
                   op->max_arity, op->name, node->num_operands);
}

/* Infers the node's type, compares it with the written one, adds the node. */
static tp_status add_parsed_node(parser *p, node_text *node) {
    tp_type types[TP_IR_MAX_OPERANDS], inferred;
    for (int i = 0; i < node->num_operands; i++)
        types[i] = *tp_graph_value_type(p->graph, node->operands[i]);
    if (tp_op_infer(node->op, types, node->num_operands, &node->attrs, &inferred) != TP_OK)
        return fail_at(p, &node->op_token, "%s", tp_last_error());
    if (!tp_ir_type_equal(&inferred, &node->written)) {
        char want[TP_MAX_DIMS * (TP_IR_NAME_MAX + 2) + 16];
        char got[TP_MAX_DIMS * (TP_IR_NAME_MAX + 2) + 16];
        return fail_at(p, &node->type_token, "expected type %s (inferred for %s), found %s",
                       tp_type_describe(p->graph, &inferred, want, sizeof want), node->op->name,
                       tp_type_describe(p->graph, &node->written, got, sizeof got));
    }
    tp_value_id id;
    if (tp_graph_add_node(p->graph, node->op->name, node->operands, node->num_operands,
                          &node->attrs, node->name, &id) != TP_OK)
        return fail_at(p, &node->name_token, "%s", tp_last_error());
    return remember_definition(p, id, node->name_token.line);
}

static tp_status parse_node(parser *p) {
    node_text node = {.attrs = TP_ATTRS_INIT};
    tp_status status = parse_new_value_name(p, node.name, &node.name_token);
    if (status == TP_OK) status = expect_punct(p, ':');
    if (status == TP_OK) {
        node.type_token = p->current;
        status = parse_type(p, &node.written);
    }
    if (status == TP_OK) status = expect_punct(p, '=');
    if (status == TP_OK) status = parse_op(p, &node);
    if (status == TP_OK) status = parse_operands(p, &node);
    if (status == TP_OK) status = check_arity(p, &node);
    if (status == TP_OK) status = parse_attributes(p, &node);
    if (status == TP_OK) status = define_literals(p, &node);
    if (status == TP_OK) status = add_parsed_node(p, &node);
    tp_tensor_release(node.attrs.data); /* the graph keeps its own reference */
    return status;
}

static tp_status parse_return(parser *p) {
    next_token(p); /* 'return' */
    tp_value_id *outputs = NULL;
    int32_t count = 0, capacity = 0;
    tp_status status = TP_OK;
    for (;;) {
        if (count == TP_IR_MAX_OUTPUTS) {
            status = expected(p, "'}' (at most 65536 returned values)");
            break;
        }
        if (count == capacity) {
            capacity = capacity ? capacity * 2 : 8;
            tp_value_id *grown = realloc(outputs, (size_t)capacity * sizeof *grown);
            if (!grown) {
                status = tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", p->filename);
                break;
            }
            outputs = grown;
        }
        if ((status = parse_value_use(p, &outputs[count])) != TP_OK) break;
        count++;
        if (!at_punct(p, ',')) break;
        next_token(p);
    }
    if (status == TP_OK) status = tp_graph_set_outputs(p->graph, outputs, count);
    free(outputs);
    return status;
}

static tp_status parse_body(parser *p) {
    while (!token_is(&p->current, TOKEN_IDENT, "return")) {
        if (p->current.kind != TOKEN_VALUE)
            return expected(p, "a node (%name: type = op(...)) or 'return'");
        TP_TRY(parse_node(p));
    }
    TP_TRY(parse_return(p));
    TP_TRY(expect_punct(p, '}'));
    if (p->current.kind != TOKEN_END) return expected(p, "end of file after the graph's '}'");
    return TP_OK;
}

tp_status tp_graph_parse(const char *text, size_t length, const char *filename, tp_graph **out) {
    if (!out || (!text && length > 0))
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_parse: text or out is NULL");
    *out = NULL;
    parser p = {.text = text ? text : "",
                .length = length,
                .line = 1,
                .filename = filename ? filename : "<text>"};
    next_token(&p);
    tp_graph *graph = NULL;
    tp_status status = parse_header(&p, &graph);
    if (status == TP_OK) status = parse_body(&p);
    if (status == TP_OK && tp_graph_verify(graph) != TP_OK)
        status = tp_error_prefix(TP_ERR_INVALID_GRAPH, "%s: ", p.filename);
    free(p.definition_lines);
    if (status != TP_OK) {
        tp_graph_destroy(graph);
        return status;
    }
    *out = graph;
    return TP_OK;
}

/* ---- files ----------------------------------------------------------------------------------- */

#define MAX_FILE_SIZE ((size_t)1 << 30)

tp_status tp_graph_load(const char *path, tp_graph **out) {
    if (!path || !out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_load: path or out is NULL");
    *out = NULL;
    FILE *file = fopen(path, "rb");
    if (!file) return tp_error_set(TP_ERR_IO, "%s: cannot open (%s)", path, strerror(errno));
    char *text = NULL;
    size_t length = 0, capacity = 0;
    tp_status status = TP_OK;
    for (;;) {
        if (length == capacity) {
            capacity = capacity ? capacity * 2 : 65536;
            char *grown = capacity <= MAX_FILE_SIZE ? realloc(text, capacity) : NULL;
            if (!grown) {
                status =
                    tp_error_set(TP_ERR_IO, "%s: too large or out of memory (limit 1 GiB)", path);
                break;
            }
            text = grown;
        }
        size_t got = fread(text + length, 1, capacity - length, file);
        length += got;
        if (got == 0) {
            if (ferror(file)) status = tp_error_set(TP_ERR_IO, "%s: read error", path);
            break;
        }
    }
    fclose(file);
    if (status == TP_OK) status = tp_graph_parse(text, length, path, out);
    free(text);
    return status;
}
