/* stax-prebuilt-generator PLUGIN FOLDER: writes the stax micro-kernel
 * library's prebuilt objects (one per family and variant, each keyed by what
 * it was made from) into FOLDER, by calling the plugin's
 * stax_gemm_prebuilt_generate entry (stax_gemm_prebuilt.c). Run by CMake
 * right after stax-llvm.so is linked; the files go beside it, and are
 * installed beside it. Knows nothing of the core. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

typedef int32_t (*generate_fn)(const char *folder, char *error, size_t error_size);

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s PLUGIN.so FOLDER\n", argv[0]);
        return 2;
    }
    void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
        fprintf(stderr, "stax-prebuilt-generator: cannot load %s: %s\n", argv[1], dlerror());
        return 1;
    }
    generate_fn generate = (generate_fn)dlsym(plugin, "stax_gemm_prebuilt_generate");
    if (!generate) {
        fprintf(stderr, "stax-prebuilt-generator: %s has no stax_gemm_prebuilt_generate: %s\n",
                argv[1], dlerror());
        return 1;
    }
    char error[2048] = "";
    if (generate(argv[2], error, sizeof error) != 0) {
        fprintf(stderr, "stax-prebuilt-generator: %s\n", error[0] ? error : "failed");
        return 1;
    }
    return 0;
}
