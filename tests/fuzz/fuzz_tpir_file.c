/* libFuzzer target for the .tpir FILE reader (tp_graph_load): any byte
 * string written to a file either loads into a graph that verifies or fails
 * with a message, and agrees with the buffer parser (fuzz_tpir.c) on which
 * of the two; never a crash, a leak or undefined behaviour. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tensorplay/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char tpir_path[256];

static void remove_tpir(void) {
    unlink(tpir_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!tpir_path[0]) {
        snprintf(tpir_path, sizeof tpir_path, "/tmp/tp-fuzz-tpir-%d-XXXXXX", (int)getpid());
        int fd = mkstemp(tpir_path);
        if (fd < 0) __builtin_trap();
        close(fd);
        atexit(remove_tpir);
    }
    FILE *file = fopen(tpir_path, "wb");
    if (!file || fwrite(data, 1, size, file) != size || fclose(file) != 0) __builtin_trap();

    tp_graph *from_file = NULL, *from_buffer = NULL;
    tp_status file_status = tp_graph_load(tpir_path, &from_file);
    if (file_status != TP_OK && (from_file || tp_last_error()[0] == '\0')) __builtin_trap();
    tp_status buffer_status = tp_graph_parse((const char *)data, size, "fuzz.tpir", &from_buffer);
    if ((file_status == TP_OK) != (buffer_status == TP_OK)) __builtin_trap();
    if (file_status == TP_OK && tp_graph_verify(from_file) != TP_OK) __builtin_trap();
    tp_graph_destroy(from_file);
    tp_graph_destroy(from_buffer);
    return 0;
}
