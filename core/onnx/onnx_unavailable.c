/* The ONNX entry points of a build configured without the importer
 * (TP_WITH_ONNX=OFF): each call says how to get one. */
#include "base/error.h"
#include "tensorplay/onnx.h"

bool tp_onnx_available(void) {
    return false;
}

static tp_status unavailable(const char *what) {
    return tp_error_set(TP_ERR_UNSUPPORTED,
                        "%s: this TensorPlay was built without the ONNX importer (install "
                        "protobuf-c-compiler libprotobuf-c-dev libonnx-dev and configure with "
                        "-DTP_WITH_ONNX=ON)",
                        what);
}

tp_status tp_graph_load_onnx(const char *path, tp_graph **out) {
    if (out) *out = NULL;
    return unavailable(path ? path : "tp_graph_load_onnx");
}

tp_status tp_graph_load_onnx_with_inputs(const char *path, const tp_onnx_known_input *known,
                                         int num_known, tp_graph **out) {
    (void)known, (void)num_known;
    if (out) *out = NULL;
    return unavailable(path ? path : "tp_graph_load_onnx_with_inputs");
}

tp_status tp_graph_load_onnx_buffer(const void *bytes, size_t size, const char *name,
                                    const char *base_dir, const tp_onnx_known_input *known,
                                    int num_known, tp_graph **out) {
    (void)bytes, (void)size, (void)base_dir, (void)known, (void)num_known;
    if (out) *out = NULL;
    return unavailable(name ? name : "tp_graph_load_onnx_buffer");
}

const char *tp_onnx_supported_op(int index) {
    (void)index;
    return NULL;
}
