/* The conformance corpus: where it is, reading its .tpir files and their
 * `# @` directives (conformance.h), expanding them into cases, retyping a
 * graph for a dtype variant, and making a case's inputs. Built only on the
 * public API; tests/sdk compiles this file into its coverage test. */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conformance.h"

#ifndef TP_CONFORMANCE_INSTALL_DIR
#define TP_CONFORMANCE_INSTALL_DIR "/usr/local/share/tensorplay/conformance"
#endif

/* ---- finding the corpus -------------------------------------------------------- */

static bool is_directory(const char *path) {
    struct stat info;
    return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

/* The folder of the running executable, resolved. */
static bool executable_dir(char *out, size_t size) {
    char self[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0) return false;
    self[length] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash) return false;
    *slash = '\0';
    snprintf(out, size, "%s", self);
    return true;
}

#if defined(TP_CONFORMANCE_SOURCE_DIR) && defined(TP_CONFORMANCE_BUILD_DIR)
static bool inside(const char *path, const char *folder) {
    char real_path[PATH_MAX], real_folder[PATH_MAX];
    if (!realpath(path, real_path) || !realpath(folder, real_folder)) return false;
    size_t length = strlen(real_folder);
    return strncmp(real_path, real_folder, length) == 0 &&
           (real_path[length] == '/' || real_path[length] == '\0');
}
#endif

static bool try_dir(const char *candidate, char *out, size_t size, char *tried, size_t tried_size) {
    size_t length = strlen(candidate);
    if (length < size && is_directory(candidate)) { /* a longer path would not fit `out` */
        memcpy(out, candidate, length + 1);
        return true;
    }
    size_t used = strlen(tried);
    if (used < tried_size)
        snprintf(tried + used, tried_size - used, "%s%s", used ? ", " : "", candidate);
    return false;
}

bool conformance_corpus_find(const char *explicit_dir, char *out, size_t size) {
    char tried[2048] = "", candidate[PATH_MAX + 64], self_dir[PATH_MAX];
    if (explicit_dir) return try_dir(explicit_dir, out, size, tried, sizeof tried);
    const char *env = secure_getenv("TP_CONFORMANCE_DIR");
    if (env && *env) return try_dir(env, out, size, tried, sizeof tried);
    bool have_self = executable_dir(self_dir, sizeof self_dir);
#if defined(TP_CONFORMANCE_SOURCE_DIR) && defined(TP_CONFORMANCE_BUILD_DIR)
    if (have_self && inside(self_dir, TP_CONFORMANCE_BUILD_DIR) &&
        try_dir(TP_CONFORMANCE_SOURCE_DIR, out, size, tried, sizeof tried))
        return true;
#endif
    if (have_self) {
        snprintf(candidate, sizeof candidate, "%s/../share/tensorplay/conformance", self_dir);
        if (try_dir(candidate, out, size, tried, sizeof tried)) return true;
    }
    if (try_dir(TP_CONFORMANCE_INSTALL_DIR, out, size, tried, sizeof tried)) return true;
    snprintf(out, size, "%s", tried);
    return false;
}

/* ---- reading files ---------------------------------------------------------------- */

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct path_list {
    int count, capacity;
    char **items;
} path_list;

static bool path_list_push(path_list *list, char *path) {
    if (list->count == list->capacity) {
        int capacity = list->capacity ? list->capacity * 2 : 64;
        char **items = realloc(list->items, (size_t)capacity * sizeof *items);
        if (!items) return false;
        list->items = items;
        list->capacity = capacity;
    }
    list->items[list->count++] = path;
    return true;
}

static bool ends_with(const char *text, const char *suffix) {
    size_t a = strlen(text), b = strlen(suffix);
    return a >= b && strcmp(text + a - b, suffix) == 0;
}

static bool collect_files(const char *dir, path_list *list) {
    DIR *handle = opendir(dir);
    if (!handle) return false;
    struct dirent *item;
    bool ok = true;
    while (ok && (item = readdir(handle))) {
        if (item->d_name[0] == '.') continue;
        char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, item->d_name) < 0) {
            ok = false;
            break;
        }
        if (is_directory(path)) {
            ok = collect_files(path, list);
            free(path);
        } else if (ends_with(path, ".tpir")) {
            ok = path_list_push(list, path);
            if (!ok) free(path);
        } else {
            free(path);
        }
    }
    closedir(handle);
    return ok;
}

static char *read_text(const char *path, size_t *length) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    char *text = NULL;
    size_t size = 0, used = 0;
    for (;;) {
        if (used + 4096 + 1 > size) {
            size = size ? size * 2 : 8192;
            char *grown = realloc(text, size);
            if (!grown) {
                free(text);
                fclose(file);
                return NULL;
            }
            text = grown;
        }
        size_t got = fread(text + used, 1, 4096, file);
        used += got;
        if (got < 4096) break;
    }
    fclose(file);
    text[used] = '\0';
    *length = used;
    return text;
}

/* ---- directives --------------------------------------------------------------------- */

static bool parse_dtypes(conformance_file *file, char *args) {
    for (char *save = NULL, *word = strtok_r(args, " \t", &save); word;
         word = strtok_r(NULL, " \t", &save)) {
        tp_dtype dtype;
        if (file->num_dtypes == CONFORMANCE_MAX_DTYPES || tp_dtype_from_name(word, &dtype) != TP_OK)
            return false;
        file->dtypes[file->num_dtypes++] = dtype;
    }
    return file->num_dtypes > 0;
}

static bool parse_range(conformance_file *file, const char *args) {
    if (file->num_ranges == CONFORMANCE_MAX_RANGES) return false;
    conformance_range *range = &file->ranges[file->num_ranges];
    char first[64];
    double low, high;
    if (sscanf(args, "%63s %lf %lf", first, &low, &high) == 3) {
        snprintf(range->input, sizeof range->input, "%s", first[0] == '%' ? first + 1 : first);
    } else if (sscanf(args, "%lf %lf", &low, &high) == 2) {
        range->input[0] = '\0';
    } else {
        return false;
    }
    if (!(low <= high)) return false;
    range->low = low;
    range->high = high;
    file->num_ranges++;
    return true;
}

static bool parse_bind(conformance_file *file, char *args) {
    if (file->num_bindings == CONFORMANCE_MAX_BINDS) return false;
    conformance_binding *binding = &file->bindings[file->num_bindings];
    memset(binding, 0, sizeof *binding);
    for (char *save = NULL, *word = strtok_r(args, " \t", &save); word;
         word = strtok_r(NULL, " \t", &save)) {
        char *equals = strchr(word, '=');
        if (!equals || binding->count == CONFORMANCE_MAX_SYMBOLS) return false;
        *equals = '\0';
        char *end = NULL;
        long long size = strtoll(equals + 1, &end, 10);
        if (!*word || *end || size < 0 || strlen(word) >= sizeof binding->names[0]) return false;
        snprintf(binding->names[binding->count], sizeof binding->names[0], "%s", word);
        binding->sizes[binding->count++] = size;
    }
    file->num_bindings++;
    return binding->count > 0;
}

/* One "# @KEY ARGS" line; false when it is malformed. */
static bool parse_directive(conformance_file *file, char *line) {
    char *key = line;
    char *args = key + strcspn(key, " \t");
    if (*args) *args++ = '\0';
    while (*args == ' ' || *args == '\t') args++;
    if (strcmp(key, "dtypes") == 0) return (file->dtypes_given = true) && parse_dtypes(file, args);
    if (strcmp(key, "range") == 0) return parse_range(file, args);
    if (strcmp(key, "bind") == 0) return parse_bind(file, args);
    if (strcmp(key, "group") == 0) {
        snprintf(file->group, sizeof file->group, "%s", args);
        return *args != '\0';
    }
    if (strcmp(key, "option") == 0) {
        if (file->num_options == CONFORMANCE_MAX_OPTIONS || !strchr(args, '=')) return false;
        file->options[file->num_options] = strdup(args);
        return file->options[file->num_options++] != NULL;
    }
    if (strcmp(key, "expect") == 0 && strncmp(args, "error ", 6) == 0) {
        free(file->expect_error);
        file->expect_error = strdup(args + 6);
        return file->expect_error != NULL;
    }
    return false;
}

static bool parse_directives(conformance_file *file, char *text, char *error, size_t size) {
    int number = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        number++;
        while (*line == ' ' || *line == '\t') line++;
        if (strncmp(line, "# @", 3) != 0) continue;
        size_t length = strlen(line);
        while (length && (line[length - 1] == ' ' || line[length - 1] == '\r'))
            line[--length] = '\0';
        if (!parse_directive(file, line + 3)) {
            snprintf(error, size, "%s:%d: malformed directive (see conformance.h)", file->path,
                     number);
            return false;
        }
    }
    return true;
}

/* Default group: the op when the graph has one kind of op, else the folder. */
static void default_group(conformance_file *file) {
    if (file->group[0]) return;
    const char *single = NULL;
    bool mixed = false;
    for (int v = 0; v < tp_graph_num_values(file->graph); v++) {
        const char *op = tp_graph_value_op(file->graph, v);
        if (!op) continue;
        if (single && strcmp(single, op) != 0) mixed = true;
        single = op;
    }
    if (single && !mixed) {
        snprintf(file->group, sizeof file->group, "%s", single);
        return;
    }
    const char *slash = strchr(file->relative, '/');
    snprintf(file->group, sizeof file->group, "%.*s",
             slash ? (int)(slash - file->relative) : (int)strlen(file->relative), file->relative);
}

static bool load_file(conformance_file *file, const char *dir, char *path, char *error,
                      size_t size) {
    file->path = path;
    const char *relative = path + strlen(dir) + 1;
    file->relative = strndup(relative, strlen(relative) - strlen(".tpir"));
    size_t length = 0;
    char *text = read_text(path, &length);
    if (!file->relative || !text) {
        free(text);
        snprintf(error, size, "%s: cannot read the file", path);
        return false;
    }
    if (tp_graph_parse(text, length, path, &file->graph) != TP_OK) {
        snprintf(error, size, "%s", tp_last_error());
        free(text);
        return false;
    }
    bool ok = parse_directives(file, text, error, size);
    free(text);
    if (!ok) return false;
    if (file->num_dtypes == 0) { /* the dtype of the first input, else f32 */
        file->dtypes[0] = TP_F32;
        if (tp_graph_num_inputs(file->graph) > 0)
            file->dtypes[0] =
                tp_graph_value_type(file->graph, tp_graph_input(file->graph, 0))->dtype;
        file->num_dtypes = 1;
    }
    default_group(file);
    return true;
}

static bool expand_cases(conformance_corpus *corpus) {
    int total = 0;
    for (int f = 0; f < corpus->num_files; f++) {
        const conformance_file *file = &corpus->files[f];
        total += file->num_dtypes * (file->num_bindings ? file->num_bindings : 1);
    }
    corpus->cases = calloc((size_t)total + 1, sizeof *corpus->cases);
    if (!corpus->cases) return false;
    for (int f = 0; f < corpus->num_files; f++) {
        const conformance_file *file = &corpus->files[f];
        for (int d = 0; d < file->num_dtypes; d++) {
            for (int b = 0; b < (file->num_bindings ? file->num_bindings : 1); b++) {
                conformance_case *item = &corpus->cases[corpus->num_cases++];
                item->file = file;
                item->dtype = file->dtypes[d];
                item->binding = file->num_bindings ? b : -1;
                int used = snprintf(item->name, sizeof item->name, "%s%s%s", file->relative,
                                    file->dtypes_given ? "." : "",
                                    file->dtypes_given ? tp_dtype_name(item->dtype) : "");
                const conformance_binding *binding = file->num_bindings ? &file->bindings[b] : NULL;
                for (int s = 0; binding && s < binding->count && used < (int)sizeof item->name; s++)
                    used +=
                        snprintf(item->name + used, sizeof item->name - (size_t)used, "%s%s=%lld",
                                 s ? "," : ".", binding->names[s], binding->sizes[s]);
            }
        }
    }
    return true;
}

tp_status conformance_corpus_load(const char *dir, conformance_corpus *corpus, char *error,
                                  size_t error_size) {
    memset(corpus, 0, sizeof *corpus);
    path_list list = {0};
    corpus->dir = strdup(dir);
    if (!corpus->dir || !collect_files(dir, &list)) {
        snprintf(error, error_size, "%s: cannot read the corpus folder", dir);
        for (int i = 0; i < list.count; i++) free(list.items[i]);
        free(list.items);
        return TP_ERR_IO;
    }
    if (list.count) qsort(list.items, (size_t)list.count, sizeof *list.items, compare_strings);
    corpus->files = calloc((size_t)list.count + 1, sizeof *corpus->files);
    tp_status status = corpus->files ? TP_OK : TP_ERR_OUT_OF_MEMORY;
    int next = 0;
    for (; status == TP_OK && next < list.count; next++) {
        corpus->num_files++;
        if (!load_file(&corpus->files[next], dir, list.items[next], error, error_size))
            status = TP_ERR_PARSE;
    }
    for (int i = next; i < list.count; i++) free(list.items[i]);
    if (status == TP_OK && list.count == 0) {
        snprintf(error, error_size, "%s: no .tpir files in the corpus folder", dir);
        status = TP_ERR_NOT_FOUND;
    }
    free(list.items);
    if (status == TP_OK && !expand_cases(corpus)) status = TP_ERR_OUT_OF_MEMORY;
    if (status == TP_ERR_OUT_OF_MEMORY) snprintf(error, error_size, "out of memory");
    if (status != TP_OK) conformance_corpus_free(corpus);
    return status;
}

void conformance_corpus_free(conformance_corpus *corpus) {
    for (int f = 0; corpus->files && f < corpus->num_files; f++) {
        conformance_file *file = &corpus->files[f];
        free(file->path);
        free(file->relative);
        tp_graph_destroy(file->graph);
        for (int o = 0; o < file->num_options; o++) free(file->options[o]);
        free(file->expect_error);
    }
    free(corpus->files);
    free(corpus->cases);
    free(corpus->dir);
    memset(corpus, 0, sizeof *corpus);
}

/* ---- retyping ---------------------------------------------------------------------------- */

static tp_status retype_input(const tp_graph *old, tp_graph *graph, tp_value_id v, tp_dtype base,
                              tp_dtype dtype, tp_value_id *id, bool *changed) {
    tp_type type = *tp_graph_value_type(old, v);
    if (type.dtype == base && dtype != base) {
        type.dtype = dtype;
        *changed = true;
    }
    for (int d = 0; d < type.ndim; d++) {
        if (!TP_DIM_IS_SYMBOL(type.dims[d])) continue;
        tp_status status =
            tp_graph_symbol(graph, tp_graph_symbol_name(old, type.dims[d]), &type.dims[d]);
        if (status != TP_OK) return status;
    }
    return tp_graph_add_input(graph, tp_graph_value_name(old, v), &type, id);
}

tp_status conformance_retype(const conformance_file *file, tp_dtype dtype, tp_graph **out,
                             bool *changed) {
    const tp_graph *old = file->graph;
    *changed = false;
    *out = NULL;
    int count = tp_graph_num_values(old);
    tp_value_id *map = calloc((size_t)count + 1, sizeof *map);
    tp_graph *graph = NULL;
    tp_status status = map ? tp_graph_create(tp_graph_name(old), &graph) : TP_ERR_OUT_OF_MEMORY;
    for (tp_value_id v = 0; status == TP_OK && v < count; v++) {
        const char *op = tp_graph_value_op(old, v);
        if (!op) {
            status = retype_input(old, graph, v, file->dtypes[0], dtype, &map[v], changed);
            continue;
        }
        tp_value_id operands[64];
        int n = tp_graph_value_num_operands(old, v);
        for (int k = 0; k < n && k < 64; k++) operands[k] = map[tp_graph_value_operand(old, v, k)];
        status = tp_graph_add_node(graph, op, operands, n, tp_graph_value_attrs(old, v),
                                   tp_graph_value_name(old, v), &map[v]);
    }
    int num_outputs = tp_graph_num_outputs(old);
    tp_value_id outputs[64];
    for (int i = 0; status == TP_OK && i < num_outputs && i < 64; i++)
        outputs[i] = map[tp_graph_output(old, i)];
    if (status == TP_OK) status = tp_graph_set_outputs(graph, outputs, num_outputs);
    free(map);
    if (status != TP_OK) {
        tp_graph_destroy(graph);
        return status;
    }
    *out = graph;
    return TP_OK;
}

/* ---- inputs ---------------------------------------------------------------------------------- */

static uint64_t hash_text(const char *text, uint64_t seed) {
    uint64_t hash = 1469598103934665603ull ^ seed;
    for (; *text; text++) hash = (hash ^ (unsigned char)*text) * 1099511628211ull;
    return hash;
}

static uint64_t next_random(uint64_t *state) { /* splitmix64 */
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void input_range(const conformance_file *file, const char *input, double *low,
                        double *high) {
    *low = -3;
    *high = 3;
    for (int r = 0; r < file->num_ranges; r++) {
        const conformance_range *range = &file->ranges[r];
        if (range->input[0] && strcmp(range->input, input) != 0) continue;
        *low = range->low;
        *high = range->high;
        if (range->input[0]) return; /* a named range wins over the general one */
    }
}

static tp_status input_shape(const conformance_case *item, const tp_graph *graph,
                             const tp_type *type, int64_t *shape) {
    for (int d = 0; d < type->ndim; d++) {
        shape[d] = type->dims[d];
        if (!TP_DIM_IS_SYMBOL(type->dims[d])) continue;
        const char *symbol = tp_graph_symbol_name(graph, type->dims[d]);
        const conformance_binding *binding =
            item->binding >= 0 ? &item->file->bindings[item->binding] : NULL;
        shape[d] = -1;
        for (int s = 0; binding && s < binding->count; s++)
            if (strcmp(binding->names[s], symbol) == 0) shape[d] = binding->sizes[s];
        if (shape[d] < 0) return TP_ERR_INVALID_ARGUMENT;
    }
    return TP_OK;
}

static void fill_values(tp_tensor *tensor, double low, double high, uint64_t *state) {
    void *data = tp_tensor_data_mut(tensor);
    int64_t count = tp_tensor_numel(tensor);
    double steps_float = floor((high - low) * 8.0);
    double int_low = ceil(low), int_high = floor(high);
    if (int_high < int_low) int_low = int_high = 0;
    for (int64_t i = 0; i < count; i++) {
        uint64_t r = next_random(state);
        double real = low + (double)(r % (uint64_t)(steps_float + 1)) / 8.0;
        double integer = int_low + (double)(r % (uint64_t)(int_high - int_low + 1));
        switch (tp_tensor_dtype(tensor)) {
        case TP_F32:
            ((float *)data)[i] = (float)real;
            break;
        case TP_F64:
            ((double *)data)[i] = real;
            break;
        case TP_F16: /* rounded once; eager and the backend read the same bits */
            ((uint16_t *)data)[i] = tp_f16_from_f64(real);
            break;
        case TP_BF16:
            ((uint16_t *)data)[i] = tp_bf16_from_f64(real);
            break;
        case TP_I32:
            ((int32_t *)data)[i] = (int32_t)integer;
            break;
        case TP_I64:
            ((int64_t *)data)[i] = (int64_t)integer;
            break;
        default:
            ((uint8_t *)data)[i] = (uint8_t)((r >> 17) & 1);
            break;
        }
    }
}

tp_status conformance_make_inputs(const conformance_case *item, const tp_graph *graph,
                                  tp_tensor **inputs) {
    int count = tp_graph_num_inputs(graph);
    for (int i = 0; i < count; i++) inputs[i] = NULL;
    for (int i = 0; i < count; i++) {
        tp_value_id id = tp_graph_input(graph, i);
        const tp_type *type = tp_graph_value_type(graph, id);
        int64_t shape[TP_MAX_DIMS];
        tp_status status = input_shape(item, graph, type, shape);
        if (status == TP_OK) status = tp_tensor_create(type->dtype, type->ndim, shape, &inputs[i]);
        if (status != TP_OK) {
            for (int k = 0; k < i; k++) tp_tensor_release(inputs[k]);
            return status;
        }
        double low, high;
        input_range(item->file, tp_graph_value_name(graph, id), &low, &high);
        uint64_t state = hash_text(item->name, (uint64_t)i);
        fill_values(inputs[i], low, high, &state);
    }
    return TP_OK;
}
