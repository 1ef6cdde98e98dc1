/* stax-llvm — from IR text to callable code with the LLVM 19 C API: parse,
 * run the new pass manager ("default<O3>", or O0..O2 by option) with a host
 * TargetMachine, emit an object file, and link it into one process-wide ORC
 * LLJIT. Objects are cached in memory (shared, reference-counted per key) and
 * on disk (plugins/common's tpcommon_cache.c), keyed by a hash of the IR (which carries the graph's
 * structure and shapes, the target CPU and its features), the backend and
 * LLVM versions and the optimisation level. Exported names in the IR carry
 * the placeholder STAXKEY, replaced by the key, so two modules never clash in
 * the shared JITDylib. One mutex serialises everything here. */
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stax_internal.h"
#include "stax_perf_map.h"
#include "tpcommon_cache.h"

struct stax_module {
    char key[40];
    int refcount;
    LLVMOrcResourceTrackerRef tracker;
    stax_module *next;
};

static pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER;
static LLVMOrcLLJITRef jit;
static char *host_triple, *host_cpu, *host_features;
static stax_module *loaded;
static int32_t jit_users; /* contexts holding the JIT (stax_jit_init - stax_jit_shutdown) */

double stax_clock_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec * 1e3 + (double)now.tv_nsec * 1e-6;
}

const char *stax_jit_cpu(void) {
    return host_cpu ? host_cpu : "generic";
}

const char *stax_jit_features(void) {
    return host_features ? host_features : "";
}

static int32_t take_error(LLVMErrorRef err, const char *what, char *error, size_t size) {
    char *message = LLVMGetErrorMessage(err);
    tpcommon_error(error, size, "stax: %s: %s", what, message ? message : "(no message)");
    LLVMDisposeErrorMessage(message);
    return TP_PLUGIN_ERROR;
}

/* LLVM's fatal errors end the process; say why through the core's log
 * (never straight to stderr) before LLVM exits. The handler is process-wide,
 * so it logs through the host of the latest init (every host logs to the
 * same core log). */
static _Atomic(const tp_plugin_host *) fatal_error_host;

static void report_llvm_fatal_error(const char *reason) {
    char message[1200];
    snprintf(message, sizeof message, "LLVM fatal error (the process ends now): %s",
             reason ? reason : "(no reason given)");
    const tp_plugin_host *host = atomic_load(&fatal_error_host);
    if (host && host->log) host->log(host, TP_PLUGIN_LOG_ERROR, message);
}

int32_t stax_jit_init(const tp_plugin_host *host, char *error, size_t error_size) {
    atomic_store(&fatal_error_host, host);
    pthread_mutex_lock(&jit_lock);
    int32_t status = TP_PLUGIN_OK;
    if (!jit) {
        LLVMInstallFatalErrorHandler(report_llvm_fatal_error);
        LLVMInitializeNativeTarget();
        LLVMInitializeNativeAsmPrinter();
        LLVMInitializeNativeAsmParser();
        host_triple = LLVMGetDefaultTargetTriple();
        host_cpu = LLVMGetHostCPUName();
        host_features = LLVMGetHostCPUFeatures();
        LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
        LLVMErrorRef err = LLVMOrcCreateLLJIT(&jit, builder);
        if (err) {
            jit = NULL;
            status = take_error(err, "creating the ORC LLJIT", error, error_size);
        } else {
            LLVMOrcDefinitionGeneratorRef generator = NULL;
            err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                &generator, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
            if (err)
                status = take_error(err, "process symbol generator", error, error_size);
            else
                LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), generator);
        }
    }
    if (status == TP_PLUGIN_OK) jit_users++;
    pthread_mutex_unlock(&jit_lock);
    return status;
}

void stax_jit_shutdown(void) {
    pthread_mutex_lock(&jit_lock);
    if (jit_users > 0 && --jit_users > 0) { /* another context still uses it */
        pthread_mutex_unlock(&jit_lock);
        return;
    }
    while (loaded) { /* executables were released: nothing should remain */
        stax_module *next = loaded->next;
        LLVMOrcReleaseResourceTracker(loaded->tracker);
        free(loaded);
        loaded = next;
    }
    if (jit) LLVMOrcDisposeLLJIT(jit);
    jit = NULL;
    LLVMDisposeMessage(host_triple);
    LLVMDisposeMessage(host_cpu);
    LLVMDisposeMessage(host_features);
    host_triple = host_cpu = host_features = NULL;
    pthread_mutex_unlock(&jit_lock);
}

void stax_jit_drop_memory_cache(void) {
    /* modules live exactly as long as their executables: nothing extra is held */
}

/* Key: two FNV-1a passes (different seeds) over everything the object depends on. */
static void make_key(const char *ir, int opt_level, char key[40]) {
    char extra[256];
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    snprintf(extra, sizeof extra, "stax %s llvm %u.%u.%u O%d %s", STAX_VERSION, major, minor, patch,
             opt_level, host_triple ? host_triple : "");
    uint64_t h1 = tpcommon_hash_bytes(TPCOMMON_HASH_SEED, ir, strlen(ir));
    h1 = tpcommon_hash_bytes(h1, extra, strlen(extra));
    uint64_t h2 = tpcommon_hash_bytes(0x9e3779b97f4a7c15ull, extra, strlen(extra));
    h2 = tpcommon_hash_bytes(h2, ir, strlen(ir));
    snprintf(key, 40, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
}

/* The disk cache's full key: everything the object depends on, spelled out
 * (the cache stores it and compares it whole): backend, core and LLVM
 * versions, optimisation level, target triple, LLVM's host CPU name and
 * features (so a cache shared between machines never hands a CPU code it
 * cannot run), then the IR. Caller frees. */
static char *disk_cache_key(const tp_plugin_host *host, const char *ir, int opt_level) {
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    tpcommon_buf key;
    tpcommon_buf_init(&key);
    tpcommon_buf_printf(&key,
                        "stax %s; core %s; llvm %u.%u.%u; O%d; triple %s; cpu %s; features %s\n",
                        STAX_VERSION, host && host->core_version ? host->core_version : "?", major,
                        minor, patch, opt_level, host_triple ? host_triple : "",
                        host_cpu ? host_cpu : "", host_features ? host_features : "");
    tpcommon_buf_append(&key, ir);
    return tpcommon_buf_take(&key);
}

/* Replaces every "STAXKEY" with "k" + the first 16 key characters. */
static char *with_key(const char *text, const char *key) {
    const char *token = "STAXKEY";
    size_t count = 0, token_length = strlen(token);
    for (const char *at = strstr(text, token); at; at = strstr(at + token_length, token)) count++;
    size_t length = strlen(text) + count * 17 + 1;
    char *out = malloc(length), *w = out;
    if (!out) return NULL;
    for (const char *r = text;;) {
        const char *at = strstr(r, token);
        size_t chunk = at ? (size_t)(at - r) : strlen(r);
        memcpy(w, r, chunk);
        w += chunk;
        if (!at) break;
        *w++ = 'k';
        memcpy(w, key, 16);
        w += 16;
        r = at + token_length;
    }
    *w = '\0';
    return out;
}

static LLVMTargetMachineRef make_target_machine(int opt_level, const char *cpu,
                                                const char *features, char *error, size_t size) {
    LLVMTargetRef target;
    char *message = NULL;
    if (LLVMGetTargetFromTriple(host_triple, &target, &message)) {
        tpcommon_error(error, size, "stax: no LLVM target for %s: %s", host_triple, message);
        LLVMDisposeMessage(message);
        return NULL;
    }
    LLVMCodeGenOptLevel level = opt_level <= 0   ? LLVMCodeGenLevelNone
                                : opt_level == 1 ? LLVMCodeGenLevelLess
                                : opt_level == 2 ? LLVMCodeGenLevelDefault
                                                 : LLVMCodeGenLevelAggressive;
    return LLVMCreateTargetMachine(target, host_triple, cpu, features, level, LLVMRelocPIC,
                                   LLVMCodeModelJITDefault);
}

/* TP_LOG=debug: where a module's compile went. */
static void log_compile_times(const tp_plugin_host *host, size_t ir_bytes, size_t object_bytes,
                              double parse_ms, double optimise_ms, double emit_ms) {
    if (!host || !host->log) return;
    char line[256];
    snprintf(line, sizeof line,
             "stax: compiled %zu bytes of IR into a %zu-byte object: parse %.1f ms, optimise "
             "%.1f ms, code generation %.1f ms",
             ir_bytes, object_bytes, parse_ms, optimise_ms, emit_ms);
    host->log(host, TP_PLUGIN_LOG_DEBUG, line);
}

/* IR text -> optimised object bytes (malloc'd), for `cpu` with `features`. */
static int32_t compile_object(const char *ir, const stax_jit_options *options, const char *cpu,
                              const char *features, void **object, size_t *object_size, char *error,
                              size_t size) {
    LLVMTargetMachineRef tm = make_target_machine(options->opt_level, cpu, features, error, size);
    if (!tm) return TP_PLUGIN_ERROR;
    LLVMContextRef context = LLVMContextCreate();
    LLVMMemoryBufferRef buffer = LLVMCreateMemoryBufferWithMemoryRange(ir, strlen(ir), "stax", 0);
    LLVMModuleRef module = NULL;
    char *message = NULL;
    int32_t status = TP_PLUGIN_OK;
    double started = stax_clock_ms(), parsed = started, optimised = started;
    if (LLVMParseIRInContext(context, buffer, &module, &message)) {
        tpcommon_error(error, size, "stax: internal error: generated IR does not parse: %s",
                       message ? message : "?");
        LLVMDisposeMessage(message);
        message = NULL; /* disposed: not again below */
        module = NULL;
        status = TP_PLUGIN_ERROR;
    }
    if (status == TP_PLUGIN_OK && LLVMVerifyModule(module, LLVMReturnStatusAction, &message)) {
        tpcommon_error(error, size, "stax: internal error: generated IR is invalid: %.1500s",
                       message ? message : "?");
        status = TP_PLUGIN_ERROR;
    }
    if (message) LLVMDisposeMessage(message);
    message = NULL;
    parsed = stax_clock_ms();
    if (status == TP_PLUGIN_OK) {
        LLVMSetTarget(module, host_triple);
        LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
        LLVMSetModuleDataLayout(module, layout);
        LLVMDisposeTargetData(layout);
        char pipeline[32];
        snprintf(pipeline, sizeof pipeline, "default<O%d>", options->opt_level);
        LLVMPassBuilderOptionsRef pass_options = LLVMCreatePassBuilderOptions();
        LLVMPassBuilderOptionsSetLoopVectorization(pass_options, options->opt_level >= 2);
        LLVMPassBuilderOptionsSetSLPVectorization(pass_options, options->opt_level >= 2);
        LLVMErrorRef err = LLVMRunPasses(module, pipeline, tm, pass_options);
        LLVMDisposePassBuilderOptions(pass_options);
        if (err) status = take_error(err, "running the LLVM passes", error, size);
    }
    if (status == TP_PLUGIN_OK && options->dump_ir && *options->dump_ir &&
        LLVMPrintModuleToFile(module, options->dump_ir, &message)) {
        tpcommon_error(error, size, "stax: dump_ir=%s: %s", options->dump_ir,
                       message ? message : "?");
        status = TP_PLUGIN_ERROR;
    }
    if (message) LLVMDisposeMessage(message);
    message = NULL;
    if (status == TP_PLUGIN_OK && options->dump_asm && *options->dump_asm) {
        char *path = strdup(options->dump_asm);
        if (!path || LLVMTargetMachineEmitToFile(tm, module, path, LLVMAssemblyFile, &message)) {
            tpcommon_error(error, size, "stax: dump_asm=%s: %s", options->dump_asm,
                           message ? message : "out of memory");
            status = TP_PLUGIN_ERROR;
        }
        free(path);
        if (message) LLVMDisposeMessage(message);
        message = NULL;
    }
    optimised = stax_clock_ms();
    LLVMMemoryBufferRef out = NULL;
    if (status == TP_PLUGIN_OK &&
        LLVMTargetMachineEmitToMemoryBuffer(tm, module, LLVMObjectFile, &message, &out)) {
        tpcommon_error(error, size, "stax: emitting the object: %s", message ? message : "?");
        status = TP_PLUGIN_ERROR;
    }
    if (message) LLVMDisposeMessage(message);
    if (status == TP_PLUGIN_OK) {
        *object_size = LLVMGetBufferSize(out);
        *object = malloc(*object_size ? *object_size : 1);
        if (*object)
            memcpy(*object, LLVMGetBufferStart(out), *object_size);
        else
            status = tpcommon_error(error, size, "stax: out of memory for the object");
        LLVMDisposeMemoryBuffer(out);
    }
    if (module) LLVMDisposeModule(module);
    LLVMContextDispose(context);
    LLVMDisposeTargetMachine(tm);
    if (status == TP_PLUGIN_OK)
        log_compile_times(options->host, strlen(ir), *object_size, parsed - started,
                          optimised - parsed, stax_clock_ms() - optimised);
    return status;
}

/* Links an object into the JIT as a module of its own; with STAX_PERF_MAP=on
 * its functions are named in /tmp/perf-PID.map (stax_perf_map.c). */
static int32_t add_object(const char *key, const void *object, size_t object_size, bool perf_map,
                          stax_module **out, char *error, size_t size) {
    stax_module *module = calloc(1, sizeof *module);
    if (!module) return tpcommon_error(error, size, "stax: out of memory");
    snprintf(module->key, sizeof module->key, "%s", key);
    module->tracker = LLVMOrcJITDylibCreateResourceTracker(LLVMOrcLLJITGetMainJITDylib(jit));
    LLVMMemoryBufferRef buffer =
        LLVMCreateMemoryBufferWithMemoryRangeCopy(object, object_size, key);
    LLVMErrorRef err = LLVMOrcLLJITAddObjectFileWithRT(jit, module->tracker, buffer);
    if (err) {
        LLVMOrcReleaseResourceTracker(module->tracker);
        free(module);
        return take_error(err, "loading the object into the JIT", error, size);
    }
    if (perf_map) {
        char prefix[18];
        snprintf(prefix, sizeof prefix, "k%.16s", key); /* with_key's prefix of exported names */
        stax_perf_map_add(jit, prefix, object, object_size);
    }
    module->refcount = 1;
    module->next = loaded;
    loaded = module;
    *out = module;
    return TP_PLUGIN_OK;
}

static void unlink_module(stax_module *module) {
    for (stax_module **at = &loaded; *at; at = &(*at)->next)
        if (*at == module) {
            *at = module->next;
            return;
        }
}

static int32_t resolve(stax_module *module, const char *const *names, int32_t count,
                       void **addresses, char *error, size_t size) {
    for (int32_t i = 0; i < count; i++) {
        char *name = with_key(names[i], module->key);
        if (!name) return tpcommon_error(error, size, "stax: out of memory");
        LLVMOrcExecutorAddress address = 0;
        LLVMErrorRef err = LLVMOrcLLJITLookup(jit, &address, name);
        free(name);
        if (err) return take_error(err, "looking up a kernel", error, size);
        addresses[i] = (void *)(uintptr_t)address;
    }
    return TP_PLUGIN_OK;
}

/* The end of a load, with jit_lock held: on success the names' addresses
 * and *out = module; a module whose names do not all resolve is released.
 * Unlocks. */
static int32_t resolve_and_unlock(int32_t status, stax_module *module, const char *const *names,
                                  int32_t num_names, void **addresses, stax_module **out,
                                  char *error, size_t error_size) {
    if (status == TP_PLUGIN_OK) {
        status = resolve(module, names, num_names, addresses, error, error_size);
        if (status != TP_PLUGIN_OK) {
            pthread_mutex_unlock(&jit_lock);
            stax_module_release(module);
            return status;
        }
        *out = module;
    }
    pthread_mutex_unlock(&jit_lock);
    return status;
}

int32_t stax_jit_load(const char *ir, const stax_jit_options *options, const char *const *names,
                      int32_t num_names, void **addresses, stax_module **out, int *cache_hit,
                      char *error, size_t error_size) {
    *out = NULL;
    *cache_hit = 0;
    char key[40];
    pthread_mutex_lock(&jit_lock);
    int32_t status =
        jit ? TP_PLUGIN_OK : tpcommon_error(error, error_size, "stax: the JIT is not initialised");
    bool dumping =
        (options->dump_ir && *options->dump_ir) || (options->dump_asm && *options->dump_asm);
    stax_module *module = NULL;
    bool perf_map = false;
    if (status == TP_PLUGIN_OK)
        status = stax_perf_map_setting(options->host, &perf_map, error, error_size);
    if (status == TP_PLUGIN_OK) {
        make_key(ir, options->opt_level, key);
        for (stax_module *m = loaded; m && !dumping; m = m->next)
            if (strcmp(m->key, key) == 0) module = m;
        if (module) {
            module->refcount++;
            *cache_hit = 1;
        }
    }
    if (status == TP_PLUGIN_OK && !module) {
        size_t object_size = 0;
        tpcommon_cache disk;
        char *disk_key = dumping ? NULL : disk_cache_key(options->host, ir, options->opt_level);
        bool disk_cache = disk_key && tpcommon_cache_open(&disk, options->host, "stax");
        void *object = disk_cache ? tpcommon_cache_read(&disk, disk_key, &object_size) : NULL;
        if (object) {
            status = add_object(key, object, object_size, perf_map, &module, error, error_size);
            if (status == TP_PLUGIN_OK) *cache_hit = 2;
            free(object);
            object = NULL;
        }
        if (!module) {
            char *text = with_key(ir, key);
            status = text ? compile_object(text, options, host_cpu, host_features, &object,
                                           &object_size, error, error_size)
                          : tpcommon_error(error, error_size, "stax: out of memory");
            free(text);
            if (status == TP_PLUGIN_OK) {
                if (disk_cache) tpcommon_cache_write(&disk, disk_key, object, object_size);
                status = add_object(key, object, object_size, perf_map, &module, error, error_size);
            }
            free(object);
        }
        free(disk_key);
    }
    return resolve_and_unlock(status, module, names, num_names, addresses, out, error, error_size);
}

const char *stax_jit_triple(void) {
    return host_triple ? host_triple : "";
}

void stax_jit_key(const char *ir, int opt_level, char key[40]) {
    pthread_mutex_lock(&jit_lock);
    make_key(ir, opt_level, key);
    pthread_mutex_unlock(&jit_lock);
}

int32_t stax_jit_compile_for_target(const char *ir, const char *cpu, const char *features,
                                    const stax_jit_options *options, void **object,
                                    size_t *object_size, char *error, size_t error_size) {
    *object = NULL;
    *object_size = 0;
    pthread_mutex_lock(&jit_lock);
    int32_t status =
        jit ? TP_PLUGIN_OK : tpcommon_error(error, error_size, "stax: the JIT is not initialised");
    char key[40];
    char *text = NULL;
    if (status == TP_PLUGIN_OK) {
        make_key(ir, options->opt_level, key);
        text = with_key(ir, key);
        if (!text) status = tpcommon_error(error, error_size, "stax: out of memory");
    }
    if (status == TP_PLUGIN_OK)
        status =
            compile_object(text, options, cpu, features, object, object_size, error, error_size);
    free(text);
    pthread_mutex_unlock(&jit_lock);
    return status;
}

int32_t stax_jit_load_object(const char *ir, int opt_level, const void *object, size_t object_size,
                             const char *const *names, int32_t num_names, void **addresses,
                             stax_module **out, char *error, size_t error_size) {
    *out = NULL;
    char key[40];
    pthread_mutex_lock(&jit_lock);
    int32_t status =
        jit ? TP_PLUGIN_OK : tpcommon_error(error, error_size, "stax: the JIT is not initialised");
    stax_module *module = NULL;
    if (status == TP_PLUGIN_OK) {
        make_key(ir, opt_level, key);
        for (stax_module *m = loaded; m; m = m->next)
            if (strcmp(m->key, key) == 0) module = m;
        bool perf_map = false; /* read through the host of the latest init */
        if (module)
            module->refcount++;
        else if (!object)
            status = TP_PLUGIN_UNAVAILABLE;
        else if ((status = stax_perf_map_setting(atomic_load(&fatal_error_host), &perf_map, error,
                                                 error_size)) == TP_PLUGIN_OK)
            status = add_object(key, object, object_size, perf_map, &module, error, error_size);
    }
    return resolve_and_unlock(status, module, names, num_names, addresses, out, error, error_size);
}

void stax_module_release(stax_module *module) {
    if (!module) return;
    pthread_mutex_lock(&jit_lock);
    if (--module->refcount == 0) {
        unlink_module(module);
        LLVMErrorRef err = LLVMOrcResourceTrackerRemove(module->tracker);
        if (err) LLVMConsumeError(err);
        LLVMOrcReleaseResourceTracker(module->tracker);
        free(module);
    }
    pthread_mutex_unlock(&jit_lock);
}
