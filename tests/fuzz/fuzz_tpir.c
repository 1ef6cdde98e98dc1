/* libFuzzer target for the .tpir parser: any byte string either parses into
 * a graph that verifies, or fails with a message; it never reads outside the
 * input (ASan) or hits undefined behaviour (UBSan). A graph that parses must
 * also print, and its printed text must parse back and print the same bytes
 * (the canonical-form promise of graph.h). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tensorplay/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tp_graph *graph = NULL;
    if (tp_graph_parse((const char *)data, size, "fuzz.tpir", &graph) != TP_OK) {
        if (graph || tp_last_error()[0] == '\0') __builtin_trap(); /* failures say why */
        return 0;
    }
    char *first = NULL, *second = NULL;
    if (tp_graph_verify(graph) != TP_OK || tp_graph_print(graph, &first) != TP_OK) __builtin_trap();
    tp_graph *again = NULL;
    if (tp_graph_parse(first, strlen(first), "printed.tpir", &again) != TP_OK) __builtin_trap();
    if (tp_graph_print(again, &second) != TP_OK || strcmp(first, second) != 0) __builtin_trap();
    tp_free(first);
    tp_free(second);
    tp_graph_destroy(again);
    tp_graph_destroy(graph);
    return 0;
}
