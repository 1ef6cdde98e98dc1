/* libFuzzer target for the compile configuration file (tensorplay.ini, read
 * through TP_CONFIG): any byte string either yields a policy or fails with a
 * message naming the file; never a crash, a leak or undefined behaviour. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile/config.h"
#include "tensorplay/compile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char config_path[256];

static void remove_config(void) {
    unlink(config_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!config_path[0]) {
        snprintf(config_path, sizeof config_path, "/tmp/tp-fuzz-config-%d-XXXXXX", (int)getpid());
        int fd = mkstemp(config_path);
        if (fd < 0) __builtin_trap();
        close(fd);
        atexit(remove_config);
        setenv("TP_CONFIG", config_path, 1);
    }
    FILE *file = fopen(config_path, "wb");
    if (!file || fwrite(data, 1, size, file) != size || fclose(file) != 0) __builtin_trap();

    tp_config_reload();
    tp_compile_policy policy;
    if (tp_config_snapshot(&policy) != TP_OK) {
        if (tp_last_error()[0] == '\0') __builtin_trap(); /* failures say why */
        return 0;
    }
    if (policy.dynamic_shapes < -1 || policy.dynamic_shapes > 1) __builtin_trap();
    return 0;
}
