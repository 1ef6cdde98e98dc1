/* TensorPlay — the ONNX importer: an ONNX model file becomes a tp_graph.
 *
 * The graph's inputs are the ONNX graph inputs that are not initializers;
 * initializers (and Constant nodes, and everything computed from them alone,
 * such as Shape of a value with known sizes) become `constant` nodes, so the
 * weights travel inside the graph. A dimension given by `dim_param` becomes
 * a symbol of that name; a dimension given by neither size nor name becomes
 * a symbol named INPUT_dN. Initializers stored in external-data files are
 * read from the model's folder (relative locations only).
 *
 * Value names: ONNX names may hold any character; a tp value name is words
 * of [A-Za-z0-9_] joined by single dots, so dots between words stay
 * ("encoder.layer.0.weight"), every other character outside [A-Za-z0-9_]
 * (and a leading, doubled or final dot) becomes '_', and a name that starts
 * with a digit gets a leading '_' (tp_onnx_value_name). The
 * graph's inputs are named that way; so is every node result whose ONNX name
 * is free after the mapping.
 *
 * Ops: the default domain ("" or "ai.onnx"), each op converted per its
 * newest opset definition and the older ones that differ where handled (for
 * example Reduce* with axes as an attribute or as an input). A model with
 * ops the importer does not know fails with one message that lists every
 * one of them (node name, op type, domain). Malformed files fail with a
 * message naming the file and the node, initializer or input at fault.
 *
 * Builds without the importer (TP_WITH_ONNX=OFF) fail every call with
 * TP_ERR_UNSUPPORTED.
 */
#ifndef TENSORPLAY_ONNX_H
#define TENSORPLAY_ONNX_H

#include <stdbool.h>
#include <stddef.h>

#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* True when this build has the ONNX importer. */
TP_API bool tp_onnx_available(void);

/* Reads an ONNX model file (mapped, not copied into a buffer first) and
 * builds its graph, verified. External data is looked up next to `path`. */
TP_API tp_status tp_graph_load_onnx(const char *path, tp_graph **out);

/* Values of graph inputs known when the model is imported (tpc run passes
 * its input files): wherever a node needs an input at import time (Reshape's
 * shape, reduce axes, Slice's bounds, ...) and that input is one of these,
 * its value is used. The graph keeps the input, and is then specialized to
 * that value: run it with the same tensor. Borrowed for the call. */
typedef struct tp_onnx_known_input {
    const char *name; /* the ONNX input name */
    const tp_tensor *value;
} tp_onnx_known_input;

TP_API tp_status tp_graph_load_onnx_with_inputs(const char *path, const tp_onnx_known_input *known,
                                                int num_known, tp_graph **out);

/* The same for a model image in memory; `name` is used in messages and
 * `base_dir` is where external-data files are looked up (NULL: external data
 * is refused). */
TP_API tp_status tp_graph_load_onnx_buffer(const void *bytes, size_t size, const char *name,
                                           const char *base_dir, const tp_onnx_known_input *known,
                                           int num_known, tp_graph **out);

/* Op type number `index` (0, 1, ...) of those the importer accepts in the
 * default domain, in name order; NULL past the last (and always NULL in a
 * build without the importer). */
TP_API const char *tp_onnx_supported_op(int index);

/* The tp value name an ONNX value name maps to (see above), written into
 * `buffer` (always NUL-terminated, truncated to `size`); returns `buffer`. */
TP_API char *tp_onnx_value_name(const char *onnx_name, char *buffer, size_t size);

#ifdef __cplusplus
}
#endif
#endif
