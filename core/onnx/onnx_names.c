/* ONNX value names to tp value names (words joined by dots): the one mapping the
 * importer, tpc's --arg matching and the node-test runner share. Needs no
 * protobuf code, so builds without the importer have it too. */
#include <stdbool.h>
#include <stddef.h>

#include "tensorplay/onnx.h"

char *tp_onnx_value_name(const char *onnx_name, char *buffer, size_t size) {
    if (!buffer || size == 0) return buffer;
    size_t at = 0;
    if (onnx_name && onnx_name[0] >= '0' && onnx_name[0] <= '9' && at + 1 < size)
        buffer[at++] = '_';
    for (const char *p = onnx_name ? onnx_name : ""; *p && at + 1 < size; p++) {
        char c = *p;
        bool word =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        /* A dot joins two words ("encoder.layer.0.weight" stays as it is); a
         * leading, doubled or final dot cannot, and becomes '_'. */
        bool joining_dot = c == '.' && at > 0 && buffer[at - 1] != '.' && p[1] && p[1] != '.';
        buffer[at++] = word || joining_dot ? c : '_';
    }
    if (at > 0 && buffer[at - 1] == '.') buffer[at - 1] = '_'; /* cut short at `size` */
    if (at == 0 && size > 1) buffer[at++] = '_';
    buffer[at] = '\0';
    return buffer;
}
