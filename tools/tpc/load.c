/* tpc: reading a graph file by its kind — `.onnx` through the ONNX importer
 * (weights inside the model become constants), anything else as .tpir. */
#include <string.h>

#include "tensorplay/onnx.h"
#include "tpc.h"

bool tpc_is_onnx_path(const char *path) {
    size_t length = strlen(path);
    return length >= 5 && strcmp(path + length - 5, ".onnx") == 0;
}

tp_status tpc_load_graph(const char *path, tp_graph **out) {
    return tpc_is_onnx_path(path) ? tp_graph_load_onnx(path, out) : tp_graph_load(path, out);
}
