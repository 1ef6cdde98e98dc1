/* Reading one backends INI file (the manifest) with inih into registry
 * claims: one tp_backend per [section], the [tensorplay] section's format
 * number, warnings for unknown keys, and the reasons an entry cannot be used
 * (missing or malformed keys, with file, line and key).
 *
 * inih gives no line numbers to the handler in the Debian build, so the file
 * is fed through our own reader, which counts lines and sees section headers
 * itself (so an empty [section] is still a claim). On a syntax error inih
 * returns the first bad line: entries and keys before it are kept, anything
 * at or after it is dropped, because a broken header would otherwise give
 * the following keys to the previous section. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "registry_internal.h"

#define MANIFEST_FORMAT 1

enum manifest_key {
    KEY_LIBRARY,
    KEY_ENTRY,
    KEY_CONTRACT,
    KEY_MIN_CORE,
    KEY_MAX_CORE,
    KEY_REQUIRES,
    KEY_TAGS,
    KEY_DESCRIPTION,
    KEY_MIN_CONTRACT,
    KEY_PRIORITY,
    KEY_COUNT
};

static const char *const key_names[KEY_COUNT] = {
    "library",  "entry", "contract",    "min_core",     "max_core",
    "requires", "tags",  "description", "min_contract", "priority"};
static const bool key_required[KEY_COUNT] = {true, true, true};

typedef struct manifest_parse {
    const char *path;
    FILE *file;
    int line;            /* line last handed to inih */
    bool line_continues; /* that line starts with whitespace (a continuation) */
    int long_line;       /* first line longer than inih's buffer, 0 if none */
    bool in_tensorplay;  /* inside [tensorplay] */
    int format;          /* declared format, 0 when absent */
    int format_line;
    tp_backend *current;     /* claim of the current section, NULL outside */
    char *values[KEY_COUNT]; /* raw values of the current section */
    tp_backend ***out;
    int *count;
    int first_new; /* index in *out of this file's first claim */
    tp_strvec *problems;
    tp_status status;
} manifest_parse;

tp_backend *tp_backend_new(const char *name, tp_backend_source source) {
    tp_backend *backend = calloc(1, sizeof *backend);
    if (!backend) return NULL;
    backend->name = tp_strdup(name);
    if (!backend->name) {
        free(backend);
        return NULL;
    }
    backend->source = source;
    backend->priority = TP_BACKEND_DEFAULT_PRIORITY;
    pthread_mutex_init(&backend->load_lock, NULL);
    atomic_init(&backend->load_state, TP_LOAD_NOT_TRIED);
    atomic_init(&backend->live_executables, 0);
    atomic_init(&backend->removed, false);
    atomic_init(&backend->shut_down, false);
    return backend;
}

void tp_backend_free_unloaded(tp_backend *backend) {
    if (!backend) return;
    free(backend->name);
    free(backend->file);
    free(backend->library);
    free(backend->entry_symbol);
    free(backend->min_core);
    free(backend->max_core);
    tp_strvec_clear(&backend->requires);
    tp_strvec_clear(&backend->requires_found);
    free(backend->tags);
    free(backend->description);
    tp_strvec_clear(&backend->warnings);
    free(backend->unavailable_reason);
    pthread_mutex_destroy(&backend->load_lock);
    free(backend);
}

static void fail(manifest_parse *parse, tp_status status) {
    if (parse->status == TP_OK) parse->status = status;
}

static void add_warning(manifest_parse *parse, char *text) {
    if (!text) return fail(parse, TP_ERR_OUT_OF_MEMORY);
    tp_loader_debug("%s", text);
    if (parse->current)
        fail(parse, tp_strvec_push_owned(&parse->current->warnings, text));
    else
        fail(parse, tp_strvec_push_owned(parse->problems, text));
}

/* ---- finishing a section: validate keys, fill the claim ------------------- */

static bool valid_backend_name(const char *name) {
    if (!*name) return false;
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.') return false;
    return true;
}

/* Splits a list written with commas and/or spaces into `out`. */
static tp_status split_list(const char *text, tp_strvec *out) {
    const char *cursor = text;
    while (*cursor) {
        while (*cursor == ',' || isspace((unsigned char)*cursor)) cursor++;
        size_t length = strcspn(cursor, ", \t\r\n");
        if (length == 0) break;
        char *item = strndup(cursor, length);
        if (!item) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
        TP_TRY(tp_strvec_push_owned(out, item));
        cursor += length;
    }
    return TP_OK;
}

static char *join_list(const tp_strvec *items) {
    size_t length = 1;
    for (int i = 0; i < items->count; i++) length += strlen(items->items[i]) + 1;
    char *text = calloc(1, length);
    if (!text) return NULL;
    for (int i = 0; i < items->count; i++) {
        if (i) strcat(text, ",");
        strcat(text, items->items[i]);
    }
    return text;
}

static char *resolve_library(const char *ini_path, const char *library) {
    if (library[0] == '/') return tp_strdup(library);
    const char *slash = strrchr(ini_path, '/');
    if (!slash) return tp_strdup(library);
    return tp_format("%.*s/%s", (int)(slash - ini_path), ini_path, library);
}

static char *section_problem(manifest_parse *parse) {
    tp_backend *backend = parse->current;
    if (!valid_backend_name(backend->name))
        return tp_format("%s:%d: backend name '%s' may only use letters, digits, '_', '-', '.'",
                         parse->path, backend->line, backend->name);
    for (int key = 0; key < KEY_COUNT; key++)
        if (key_required[key] && (!parse->values[key] || !*parse->values[key]))
            return tp_format("%s:%d: entry '%s' lacks the required key '%s'", parse->path,
                             backend->line, backend->name, key_names[key]);
    char *end = NULL;
    errno = 0;
    long contract = strtol(parse->values[KEY_CONTRACT], &end, 10);
    if (errno || *end || contract < 1 || contract > 1000000)
        return tp_format("%s:%d: key 'contract' of entry '%s' must be a revision number >= 1, "
                         "got '%s'",
                         parse->path, backend->key_lines[KEY_CONTRACT], backend->name,
                         parse->values[KEY_CONTRACT]);
    backend->contract = (int)contract;
    backend->min_contract = backend->contract;
    if (parse->values[KEY_MIN_CONTRACT] && *parse->values[KEY_MIN_CONTRACT]) {
        errno = 0;
        long min_contract = strtol(parse->values[KEY_MIN_CONTRACT], &end, 10);
        if (errno || *end || min_contract < 1 || min_contract > contract)
            return tp_format("%s:%d: key 'min_contract' of entry '%s' must be a revision number "
                             "from 1 to 'contract' (%ld), got '%s'",
                             parse->path, backend->key_lines[KEY_MIN_CONTRACT], backend->name,
                             contract, parse->values[KEY_MIN_CONTRACT]);
        backend->min_contract = (int)min_contract;
    }
    if (parse->values[KEY_PRIORITY] && *parse->values[KEY_PRIORITY]) {
        errno = 0;
        long priority = strtol(parse->values[KEY_PRIORITY], &end, 10);
        if (errno || *end || priority < 0 || priority > 1000000)
            return tp_format("%s:%d: key 'priority' of entry '%s' must be a number from 0 to "
                             "1000000 (higher wins for `auto`), got '%s'",
                             parse->path, backend->key_lines[KEY_PRIORITY], backend->name,
                             parse->values[KEY_PRIORITY]);
        backend->priority = (int)priority;
    }
    for (int key = KEY_MIN_CORE; key <= KEY_MAX_CORE; key++) {
        int version[3];
        if (parse->values[key] && *parse->values[key] &&
            !tp_version_parse(parse->values[key], version))
            return tp_format("%s:%d: key '%s' of entry '%s' must be a version like 0.1.0, "
                             "got '%s'",
                             parse->path, backend->key_lines[key], key_names[key], backend->name,
                             parse->values[key]);
    }
    return NULL;
}

static void finish_section(manifest_parse *parse) {
    tp_backend *backend = parse->current;
    if (!backend) return;
    const char *empty = "";
#define VALUE(key) (parse->values[key] ? parse->values[key] : empty)
    backend->file = tp_strdup(parse->path);
    backend->library =
        *VALUE(KEY_LIBRARY) ? resolve_library(parse->path, VALUE(KEY_LIBRARY)) : tp_strdup("");
    backend->entry_symbol = tp_strdup(VALUE(KEY_ENTRY));
    backend->min_core = tp_strdup(VALUE(KEY_MIN_CORE));
    backend->max_core = tp_strdup(VALUE(KEY_MAX_CORE));
    backend->description = tp_strdup(VALUE(KEY_DESCRIPTION));
#undef VALUE
    tp_strvec tags = {0};
    if (parse->values[KEY_TAGS]) fail(parse, split_list(parse->values[KEY_TAGS], &tags));
    backend->tags = join_list(&tags);
    tp_strvec_clear(&tags);
    if (parse->values[KEY_REQUIRES])
        fail(parse, split_list(parse->values[KEY_REQUIRES], &backend->requires));
    if (!backend->file || !backend->library || !backend->entry_symbol || !backend->min_core ||
        !backend->max_core || !backend->description || !backend->tags)
        fail(parse, TP_ERR_OUT_OF_MEMORY);
    char *problem = section_problem(parse);
    if (problem) {
        backend->unavailable_reason = problem;
        tp_loader_debug("rejected '%s': %s", backend->name, problem);
    }
    for (int key = 0; key < KEY_COUNT; key++) {
        free(parse->values[key]);
        parse->values[key] = NULL;
    }
    parse->current = NULL;
}

/* ---- the reader and the handler ------------------------------------------- */

static void begin_section(manifest_parse *parse, const char *header) {
    finish_section(parse);
    const char *close = strchr(header + 1, ']');
    if (!close) return; /* inih reports the syntax error */
    char *name = strndup(header + 1, (size_t)(close - header - 1));
    if (!name) return fail(parse, TP_ERR_OUT_OF_MEMORY);
    parse->in_tensorplay = strcmp(name, "tensorplay") == 0;
    if (parse->in_tensorplay) {
        free(name);
        return;
    }
    tp_backend *backend = tp_backend_new(name, TP_BACKEND_SOURCE_INI);
    free(name);
    tp_backend **grown =
        backend ? realloc(*parse->out, (size_t)(*parse->count + 1) * sizeof *grown) : NULL;
    if (!grown) {
        tp_backend_free_unloaded(backend);
        return fail(parse, TP_ERR_OUT_OF_MEMORY);
    }
    *parse->out = grown;
    backend->line = parse->line;
    grown[(*parse->count)++] = backend;
    parse->current = backend;
}

static char *read_line(char *buffer, int size, void *stream) {
    manifest_parse *parse = stream;
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length = getline(&line, &capacity, parse->file);
    if (length < 0) {
        free(line);
        return NULL;
    }
    parse->line++;
    if (length > size - 2 && !parse->long_line) parse->long_line = parse->line;
    snprintf(buffer, (size_t)size, "%s", line);
    if (length > size - 2) buffer[size - 2] = '\n';
    free(line);
    parse->line_continues = buffer[0] == ' ' || buffer[0] == '\t';
    const char *start = buffer;
    while (isspace((unsigned char)*start)) start++;
    if (*start == '[') begin_section(parse, start);
    return buffer;
}

static void handle_tensorplay_key(manifest_parse *parse, const char *name, const char *value) {
    if (strcmp(name, "format") == 0) {
        char *end = NULL;
        long format = strtol(value, &end, 10);
        parse->format = (*value && !*end && format > 0 && format < 1000000) ? (int)format : -1;
        parse->format_line = parse->line;
        return;
    }
    add_warning(parse, tp_format("%s:%d: unknown key '%s' in [tensorplay] (known: format)",
                                 parse->path, parse->line, name));
}

static int handle_key(void *user, const char *section, const char *name, const char *value) {
    manifest_parse *parse = user;
    if (parse->in_tensorplay) {
        handle_tensorplay_key(parse, name, value);
        return 1;
    }
    tp_backend *backend = parse->current;
    if (!backend || strcmp(section, backend->name) != 0) {
        add_warning(parse, tp_format("%s:%d: key '%s' outside a backend section is ignored",
                                     parse->path, parse->line, name));
        return 1;
    }
    for (int key = 0; key < KEY_COUNT; key++) {
        if (strcmp(name, key_names[key]) != 0) continue;
        if (parse->values[key] && parse->line_continues) { /* continuation line */
            char *joined = tp_format("%s %s", parse->values[key], value);
            if (!joined) fail(parse, TP_ERR_OUT_OF_MEMORY);
            free(parse->values[key]);
            parse->values[key] = joined;
        } else if (parse->values[key]) {
            add_warning(parse, tp_format("%s:%d: key '%s' repeated in [%s]; the first value is "
                                         "kept",
                                         parse->path, parse->line, name, backend->name));
        } else {
            parse->values[key] = tp_strdup(value);
            if (!parse->values[key]) fail(parse, TP_ERR_OUT_OF_MEMORY);
            backend->key_lines[key] = parse->line;
        }
        return 1;
    }
    add_warning(parse, tp_format("%s:%d: unknown key '%s' in [%s] is ignored", parse->path,
                                 parse->line, name, backend->name));
    return 1;
}

/* ---- after the parse: syntax errors, format ---------------------------------- */

static void drop_from_line(manifest_parse *parse, int error_line) {
    int kept = parse->first_new;
    for (int i = parse->first_new; i < *parse->count; i++) {
        tp_backend *backend = (*parse->out)[i];
        if (backend->line < error_line) {
            (*parse->out)[kept++] = backend;
            continue;
        }
        tp_loader_debug("%s:%d: entry '%s' dropped: it follows the syntax error at line %d",
                        parse->path, backend->line, backend->name, error_line);
        /* A dropped claim is never published; it is freed here. */
        tp_backend_free_unloaded(backend);
    }
    *parse->count = kept;
}

static void refuse_entries(manifest_parse *parse, const char *reason) {
    for (int i = parse->first_new; i < *parse->count; i++) {
        tp_backend *backend = (*parse->out)[i];
        free(backend->unavailable_reason);
        backend->unavailable_reason = tp_strdup(reason);
        if (!backend->unavailable_reason) fail(parse, TP_ERR_OUT_OF_MEMORY);
    }
}

static void add_problem(manifest_parse *parse, char *text) {
    if (!text) return fail(parse, TP_ERR_OUT_OF_MEMORY);
    tp_loader_debug("%s", text);
    fail(parse, tp_strvec_push_owned(parse->problems, text));
}

tp_status tp_manifest_read(const char *path, tp_backend ***out, int *count, tp_strvec *problems) {
    manifest_parse parse = {.path = path, .out = out, .count = count, .problems = problems};
    parse.first_new = *count;
    parse.file = fopen(path, "re");
    if (!parse.file) {
        add_problem(&parse, tp_format("%s: cannot read: %s", path, strerror(errno)));
        return parse.status;
    }
    tp_loader_debug("reading %s", path);
    int error_line = ini_parse_stream(read_line, &parse, handle_key, &parse);
    finish_section(&parse);
    fclose(parse.file);
    if (parse.long_line && (error_line <= 0 || parse.long_line < error_line))
        error_line = parse.long_line;
    if (error_line > 0) {
        add_problem(&parse, tp_format("%s:%d: syntax error%s; entries from this line on are "
                                      "ignored",
                                      path, error_line,
                                      error_line == parse.long_line ? " (line too long)" : ""));
        drop_from_line(&parse, error_line);
    }
    if (parse.format > MANIFEST_FORMAT || parse.format < 0) {
        char *reason =
            parse.format < 0
                ? tp_format("%s:%d: [tensorplay] format must be a number", path, parse.format_line)
                : tp_format("%s:%d: manifest format %d is newer than this TensorPlay reads (%d); "
                            "upgrade TensorPlay",
                            path, parse.format_line, parse.format, MANIFEST_FORMAT);
        if (reason) refuse_entries(&parse, reason);
        add_problem(&parse, reason);
    }
    char *distrust = tp_file_trust_problem(path, "INI file");
    if (distrust) {
        refuse_entries(&parse, distrust);
        for (int i = parse.first_new; i < *count; i++) (*out)[i]->refused = true;
        add_problem(&parse, distrust);
    }
    return parse.status;
}
