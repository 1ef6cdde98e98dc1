/* tpc run's input tensors: read from --arg NAME=FILE.npy and --args FILE.npz
 * before the graph is loaded (an ONNX model may need some of them at import
 * time: a Reshape's shape given as an input), then matched to the graph's
 * inputs by name — as written, or as the ONNX importer maps names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorplay/onnx.h"
#include "tpc.h"

static int add(tpc_input_set *set, const char *name, tp_tensor *tensor, const char *source) {
    for (int i = 0; i < set->count; i++)
        if (strcmp(set->items[i].name, name) == 0) {
            fprintf(stderr, "tpc: input '%s' is given twice (%s and %s)\n", name,
                    set->items[i].source, source);
            tp_tensor_release(tensor);
            return 2;
        }
    if (set->count == set->capacity) {
        int capacity = set->capacity ? set->capacity * 2 : 8;
        tpc_named_tensor *items = realloc(set->items, (size_t)capacity * sizeof *items);
        if (!items) {
            tp_tensor_release(tensor);
            return 1;
        }
        set->items = items;
        set->capacity = capacity;
    }
    tpc_named_tensor *item = &set->items[set->count];
    item->name = malloc(strlen(name) + 1);
    item->source = malloc(strlen(source) + 1);
    if (!item->name || !item->source) {
        free(item->name);
        free(item->source);
        tp_tensor_release(tensor);
        return 1;
    }
    strcpy(item->name, name);
    strcpy(item->source, source);
    item->tensor = tensor;
    set->count++;
    return 0;
}

int tpc_inputs_add_file(tpc_input_set *set, const char *name, const char *path) {
    tp_tensor *tensor;
    if (tp_npy_load(path, &tensor) != TP_OK) {
        fprintf(stderr, "tpc: %s\n", tp_last_error());
        return 1;
    }
    char label[512];
    snprintf(label, sizeof label, "--arg %s", name);
    return add(set, name, tensor, label);
}

static int add_member(const char *name, const void *npy, size_t size, const char *archive,
                      void *user) {
    char label[512];
    snprintf(label, sizeof label, "%s:%s", archive, name);
    tp_tensor *tensor;
    if (tp_npy_load_buffer(npy, size, label, &tensor) != TP_OK) {
        fprintf(stderr, "tpc: %s\n", tp_last_error());
        return 1;
    }
    snprintf(label, sizeof label, "--args %s:%s", archive, name);
    return add(user, name, tensor, label);
}

int tpc_inputs_add_npz(tpc_input_set *set, const char *path) {
    return tpc_npz_each(path, add_member, set);
}

void tpc_inputs_free(tpc_input_set *set) {
    for (int i = 0; i < set->count; i++) {
        free(set->items[i].name);
        free(set->items[i].source);
        tp_tensor_release(set->items[i].tensor);
    }
    free(set->items);
    set->items = NULL;
    set->count = set->capacity = 0;
}

static int find_input(const tp_graph *graph, const char *name) {
    char mapped[256];
    tp_onnx_value_name(name, mapped, sizeof mapped);
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) {
        const char *input = tp_graph_value_name(graph, tp_graph_input(graph, i));
        if (strcmp(input, name) == 0 || (mapped[0] && strcmp(input, mapped) == 0)) return i;
    }
    return -1;
}

int tpc_inputs_bind(const tpc_input_set *set, const tp_graph *graph, tp_tensor **inputs) {
    int num_inputs = tp_graph_num_inputs(graph);
    for (int i = 0; i < num_inputs; i++) inputs[i] = NULL;
    for (int a = 0; a < set->count; a++) {
        int match = find_input(graph, set->items[a].name);
        if (match < 0) {
            fprintf(stderr, "tpc: %s: graph '%s' has no input named %%%s; its inputs are:",
                    set->items[a].source, tp_graph_name(graph), set->items[a].name);
            for (int i = 0; i < num_inputs; i++)
                fprintf(stderr, " %%%s", tp_graph_value_name(graph, tp_graph_input(graph, i)));
            fprintf(stderr, "\n");
            return 2;
        }
        if (inputs[match]) {
            fprintf(stderr, "tpc: input %%%s is given twice (%s)\n",
                    tp_graph_value_name(graph, tp_graph_input(graph, match)), set->items[a].source);
            return 2;
        }
        inputs[match] = tp_tensor_retain(set->items[a].tensor);
    }
    for (int i = 0; i < num_inputs; i++)
        if (!inputs[i]) {
            char type[256];
            tp_value_id id = tp_graph_input(graph, i);
            fprintf(stderr, "tpc: missing --arg %s=FILE.npy for input %%%s: %s of graph '%s'\n",
                    tp_graph_value_name(graph, id), tp_graph_value_name(graph, id),
                    tp_type_describe(graph, tp_graph_value_type(graph, id), type, sizeof type),
                    tp_graph_name(graph));
            return 2;
        }
    return 0;
}

tp_status tpc_load_graph_with_inputs(const char *path, const tpc_input_set *set, tp_graph **out) {
    if (!tpc_is_onnx_path(path)) return tp_graph_load(path, out);
    tp_onnx_known_input *known = calloc((size_t)set->count + 1, sizeof *known);
    if (!known) return TP_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < set->count; i++) {
        known[i].name = set->items[i].name;
        known[i].value = set->items[i].tensor;
    }
    tp_status status = tp_graph_load_onnx_with_inputs(path, known, set->count, out);
    free(known);
    return status;
}
