/* stax-llvm — the micro-kernel library's prebuilt objects: made at build
 * time (stax_gemm_prebuilt_generate, called by the generator tool that
 * CMake runs after linking the plugin) and found beside the plugin's own
 * file at run time.
 *
 * Each file is a plugins/common cache entry (magic, full key, checksum, the
 * object): the key spells out what the object was made from (stax and LLVM
 * versions, O3, triple, the family baseline's CPU and features, and the IR's
 * hash and length), so a stale or foreign file is a miss. It is the object
 * stax_jit_compile_for_target makes from the library's IR emitted for the
 * baseline CPU (stax_prebuilt_choice.c), so its symbols carry that IR's key.
 * A file that is missing, untrusted, truncated, corrupt, of another key or
 * refused by the JIT is never used and never an error: the library is then
 * compiled from IR for the host, as without prebuilt objects. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <llvm-c/Core.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stax_internal.h"
#include "stax_prebuilt.h"
#include "tpcommon_cache.h"
#include "tpcommon_trust.h"

#define PREBUILT_MAX_BYTES ((size_t)64 << 20)

/* The full key of the prebuilt object made from `ir` (whose JIT key is
 * `jit_key`) for `baseline`. */
static void prebuilt_key(const char *ir, const char jit_key[40],
                         const stax_prebuilt_baseline *baseline, char *out, size_t size) {
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    snprintf(out, size,
             "stax prebuilt micro-kernels; stax %s; llvm %u.%u.%u; O3; triple %s; cpu %s; "
             "features %s; ir %s (%zu bytes)",
             STAX_VERSION, major, minor, patch, stax_jit_triple(), baseline->cpu,
             baseline->features, jit_key, strlen(ir));
}

/* A library's two keys, made once per process: emitting and hashing its
 * 200 KB of IR took 4 of the 5 ms that loading its prebuilt object took,
 * on every compile after the memory cache was dropped. The IR of a family
 * for its baseline never changes within a process (nor does the JIT's
 * triple, which the keys hold), so the keys are kept, not the IR. */
typedef struct library_keys {
    bool legacy;
    const stax_gemm_family *family; /* the static families table's entry, or NULL */
    char jit_key[40];
    char file_key[1024];
} library_keys;

static library_keys known_keys[8];
static int32_t num_known_keys;
static pthread_mutex_t known_keys_lock = PTHREAD_MUTEX_INITIALIZER;

static bool keys_of_library(bool legacy, const stax_gemm_family *family,
                            const stax_prebuilt_baseline *baseline, library_keys *out) {
    pthread_mutex_lock(&known_keys_lock);
    for (int32_t i = 0; i < num_known_keys; i++)
        if (known_keys[i].legacy == legacy && known_keys[i].family == family) {
            *out = known_keys[i];
            pthread_mutex_unlock(&known_keys_lock);
            return true;
        }
    pthread_mutex_unlock(&known_keys_lock);
    char *ir = stax_gemm_library_ir(legacy, family, baseline->cpu, baseline->features);
    if (!ir) return false;
    out->legacy = legacy;
    out->family = family;
    stax_jit_key(ir, 3, out->jit_key);
    prebuilt_key(ir, out->jit_key, baseline, out->file_key, sizeof out->file_key);
    free(ir);
    pthread_mutex_lock(&known_keys_lock);
    if (num_known_keys < (int32_t)(sizeof known_keys / sizeof *known_keys))
        known_keys[num_known_keys++] = *out;
    pthread_mutex_unlock(&known_keys_lock);
    return true;
}

/* ---- where the files are ---- */

static char plugin_folder[4096];
static pthread_once_t plugin_folder_once = PTHREAD_ONCE_INIT;

/* The file of the mapping that holds `address`, from /proc/self/maps: the
 * registry dlopens plugins as /proc/self/fd/N, a name dladdr then repeats
 * after the descriptor is closed. */
static void mapped_file_of(const void *address, char *out, size_t size) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps) return;
    char line[4608];
    uintptr_t at = (uintptr_t)address;
    while (fgets(line, sizeof line, maps)) {
        unsigned long long begin, end;
        int path_at = 0;
        if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &begin, &end, &path_at) < 2) continue;
        if (at < begin || at >= end || path_at <= 0 || line[path_at] != '/') continue;
        line[strcspn(line, "\n")] = '\0';
        if (!strstr(line + path_at, " (deleted)")) snprintf(out, size, "%s", line + path_at);
        break;
    }
    fclose(maps);
}

static void find_plugin_folder(void) {
    char file[4096] = "";
    Dl_info info;
    if (dladdr((const void *)&find_plugin_folder, &info) && info.dli_fname &&
        info.dli_fname[0] == '/' && strncmp(info.dli_fname, "/proc/", 6) != 0)
        snprintf(file, sizeof file, "%s", info.dli_fname);
    else
        mapped_file_of((const void *)&find_plugin_folder, file, sizeof file);
    char *slash = strrchr(file, '/');
    if (slash) *slash = '\0';
    snprintf(plugin_folder, sizeof plugin_folder, "%s", file);
}

/* STAX_PREBUILT_DIR (for tests: another folder than the plugin's), else the
 * folder of the plugin's file ("" when it cannot be known). */
static const char *prebuilt_folder(const tp_plugin_host *host) {
    const char *forced = host && host->getenv ? host->getenv("STAX_PREBUILT_DIR") : NULL;
    if (forced && *forced) return forced;
    pthread_once(&plugin_folder_once, find_plugin_folder);
    return plugin_folder;
}

/* ---- using them ---- */

/* The object in the file at `path` when it holds exactly `key` (caller
 * frees), else NULL with the reason logged. */
static void *read_prebuilt(const tp_plugin_host *host, const char *path, const char *key,
                           size_t *object_size) {
    size_t size = 0, offset = 0;
    int untrusted = 0;
    char why[2048];
    unsigned char *bytes =
        tpcommon_trusted_file_read(path, PREBUILT_MAX_BYTES, &size, &untrusted, why, sizeof why);
    if (!bytes) {
        tpcommon_log(host, untrusted ? TP_PLUGIN_LOG_INFO : TP_PLUGIN_LOG_DEBUG,
                     "stax: prebuilt micro-kernels %s not used (%s): the library compiles from IR",
                     path, why);
        return NULL;
    }
    const char *problem = tpcommon_cache_entry_problem(bytes, size, key, &offset, object_size);
    if (problem && !strcmp(problem, "made for another key")) {
        size_t stored_size = 0;
        const char *stored = tpcommon_cache_entry_stored_key(bytes, size, &stored_size);
        tpcommon_log(host, TP_PLUGIN_LOG_DEBUG,
                     "stax: prebuilt micro-kernels %s not used: made for another key ('%.*s'; this "
                     "build needs '%s'): the library compiles from IR",
                     path, (int)(stored_size < 900 ? stored_size : 900), stored ? stored : "", key);
    } else if (problem) {
        tpcommon_log(host, TP_PLUGIN_LOG_INFO,
                     "stax: prebuilt micro-kernels %s not used: the file is %s: the library "
                     "compiles from IR (rebuild or reinstall the stax plugin)",
                     path, problem);
    }
    if (problem) {
        free(bytes);
        return NULL;
    }
    memmove(bytes, bytes + offset, *object_size);
    return bytes;
}

int32_t stax_gemm_prebuilt_load(const tp_plugin_host *host, bool legacy,
                                const stax_gemm_family *family, bool dumping,
                                const char *const *names, int32_t count, void **addresses,
                                stax_module **module, int *cache_hit, char *error,
                                size_t error_size) {
    *module = NULL;
    bool use = true;
    const char *setting = host && host->getenv ? host->getenv("STAX_PREBUILT_KERNELS") : NULL;
    if (stax_prebuilt_setting(setting, &use, error, error_size) != TP_PLUGIN_OK)
        return TP_PLUGIN_ERROR;
    const char *family_name = family ? family->name : NULL;
    char file[128], why[256];
    stax_prebuilt_file_name(legacy, family_name, file, sizeof file);
    const char *refusal = !use      ? "STAX_PREBUILT_KERNELS=off"
                          : dumping ? "dump_ir or dump_asm is set (dumping compiles)"
                                    : stax_prebuilt_refusal(stax_jit_triple(), legacy, family_name,
                                                            stax_jit_features(), why, sizeof why);
    if (refusal) {
        tpcommon_log(host, TP_PLUGIN_LOG_DEBUG, "stax: prebuilt micro-kernels %s not used: %s",
                     file, refusal);
        return TP_PLUGIN_OK;
    }
    const stax_prebuilt_baseline *baseline = stax_prebuilt_baseline_for(legacy, family_name);
    library_keys keys;
    if (!keys_of_library(legacy, family, baseline, &keys))
        return tpcommon_error(error, error_size, "stax: out of memory");
    char jit_error[1024] = "";
    int32_t status = stax_jit_load_object(keys.jit_key, NULL, 0, names, count, addresses, module,
                                          jit_error, sizeof jit_error);
    if (status == TP_PLUGIN_OK) {
        *cache_hit = 1;
        return TP_PLUGIN_OK;
    }
    const char *folder = prebuilt_folder(host);
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", folder, file);
    size_t object_size = 0;
    void *object = folder[0] ? read_prebuilt(host, path, keys.file_key, &object_size) : NULL;
    if (!folder[0])
        tpcommon_log(host, TP_PLUGIN_LOG_DEBUG,
                     "stax: prebuilt micro-kernels %s not used: the plugin's folder is unknown",
                     file);
    status = object ? stax_jit_load_object(keys.jit_key, object, object_size, names, count,
                                           addresses, module, jit_error, sizeof jit_error)
                    : TP_PLUGIN_UNAVAILABLE;
    if (object && status != TP_PLUGIN_OK)
        tpcommon_log(
            host, TP_PLUGIN_LOG_INFO,
            "stax: prebuilt micro-kernels %s not used: the JIT refuses it (%s): the library "
            "compiles from IR (rebuild or reinstall the stax plugin)",
            path, jit_error);
    if (status == TP_PLUGIN_OK) {
        *cache_hit = 3;
        tpcommon_log(host, TP_PLUGIN_LOG_DEBUG, "stax: micro-kernel library %s: prebuilt %s",
                     family_name ? family_name : "legacy", path);
    }
    free(object);
    return TP_PLUGIN_OK;
}

/* ---- making them ---- */

static int32_t generate_one(const char *folder, bool legacy, const stax_gemm_family *family,
                            char *error, size_t error_size) {
    const char *family_name = family ? family->name : NULL;
    const stax_prebuilt_baseline *baseline = stax_prebuilt_baseline_for(legacy, family_name);
    if (!baseline) return TP_PLUGIN_OK;
    char *ir = stax_gemm_library_ir(legacy, family, baseline->cpu, baseline->features);
    if (!ir) return tpcommon_error(error, error_size, "stax: out of memory");
    stax_jit_options options = {3, NULL, NULL, NULL};
    void *object = NULL;
    size_t object_size = 0;
    int32_t status = stax_jit_compile_for_target(ir, baseline->cpu, baseline->features, &options,
                                                 &object, &object_size, error, error_size);
    char file[128], path[4400], key[1024], jit_key[40];
    stax_prebuilt_file_name(legacy, family_name, file, sizeof file);
    snprintf(path, sizeof path, "%s/%s", folder, file);
    stax_jit_key(ir, 3, jit_key);
    prebuilt_key(ir, jit_key, baseline, key, sizeof key);
    if (status == TP_PLUGIN_OK && !tpcommon_cache_write_file(path, key, object, object_size, 0644))
        status = tpcommon_error(error, error_size, "stax: cannot write %s", path);
    free(object);
    free(ir);
    return status;
}

TP_PLUGIN_EXPORT int32_t stax_gemm_prebuilt_generate(const char *folder, char *error,
                                                     size_t error_size) {
    int32_t status = stax_jit_init(NULL, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    if (strncmp(stax_jit_triple(), "x86_64-", 7) != 0) { /* no baselines elsewhere (yet) */
        stax_jit_shutdown();
        return TP_PLUGIN_OK;
    }
    static const char *const families[] = {"avx512", "avx2", "generic"};
    status = generate_one(folder, true, NULL, error, error_size);
    for (int legacy = 0; legacy < 2 && status == TP_PLUGIN_OK; legacy++)
        for (size_t i = 0; i < sizeof families / sizeof *families && status == TP_PLUGIN_OK; i++)
            status = generate_one(folder, legacy, stax_gemm_family_named(families[i]), error,
                                  error_size);
    stax_jit_shutdown();
    return status;
}
