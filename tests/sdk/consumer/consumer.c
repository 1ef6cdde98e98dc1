/* Builds y = add(x, x) for x = [1, 2, 3], runs it on the `eager` backend
 * (built into the library) and prints y; the caller checks "2 4 6". */
#include <stdio.h>

#include "tensorplay/tensorplay.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        if ((call) != TP_OK) {                                                                     \
            fprintf(stderr, "consumer: %s: %s\n", #call, tp_last_error());                         \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void) {
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {3}};
    tp_graph *graph = NULL;
    tp_value_id x, y;
    CHECK(tp_graph_create("double", &graph));
    CHECK(tp_graph_add_input(graph, "x", &type, &x));
    tp_value_id operands[2] = {x, x};
    CHECK(tp_graph_add_node(graph, "add", operands, 2, NULL, "y", &y));
    CHECK(tp_graph_set_outputs(graph, &y, 1));
    tp_backend *eager = NULL;
    CHECK(tp_backend_lookup("eager", &eager));
    const float values[3] = {1, 2, 3};
    int64_t dims[1] = {3};
    tp_tensor *input = NULL, *output = NULL;
    CHECK(tp_tensor_from_data(TP_F32, 1, dims, values, &input));
    tp_executable *executable = NULL;
    CHECK(tp_backend_compile(eager, graph, &input, 1, NULL, 0, &executable));
    CHECK(tp_executable_run(executable, &input, 1, &output));
    const float *result = tp_tensor_data(output);
    printf("TensorPlay %s: %g %g %g\n", tp_version(), result[0], result[1], result[2]);
    tp_tensor_release(input);
    tp_tensor_release(output);
    tp_executable_destroy(executable);
    tp_graph_destroy(graph);
    return 0;
}
