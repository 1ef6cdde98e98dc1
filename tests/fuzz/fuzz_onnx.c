/* libFuzzer target for the ONNX importer: any byte string either imports
 * into a graph that verifies and prints, or fails with a message; it never
 * reads outside the input (ASan), hits undefined behaviour (UBSan) or
 * allocates what the file only claims (libFuzzer's -rss_limit). External
 * data is refused (no folder is given), so the target touches no files. */
#include <stddef.h>
#include <stdint.h>

#include "tensorplay/graph.h"
#include "tensorplay/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tp_graph *graph = NULL;
    tp_status status = tp_graph_load_onnx_buffer(data, size, "fuzz.onnx", NULL, NULL, 0, &graph);
    if (status != TP_OK) {
        if (graph != NULL || tp_last_error()[0] == '\0') __builtin_trap();
        return 0;
    }
    if (tp_graph_verify(graph) != TP_OK) __builtin_trap();
    char *text = NULL;
    if (tp_graph_print(graph, &text) != TP_OK) __builtin_trap();
    tp_free(text);
    tp_graph_destroy(graph);
    return 0;
}
