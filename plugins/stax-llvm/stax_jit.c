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
#include "stax_ir_split.h"
#include "stax_perf_map.h"
#include "tpcommon_cache.h"

struct stax_module {
    char key[40];
    int refcount;
    LLVMOrcResourceTrackerRef tracker;
    stax_module *next;
    /* a graph compiled in parts: its parts' modules (each in `loaded`, each
       with its own reference); this module itself is not in `loaded` */
    stax_module **parts;
    int32_t num_parts;
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

/* Where a module's compile went. */
typedef struct compile_times {
    size_t ir_bytes, object_bytes;
    double parse_ms, optimise_ms, emit_ms;
} compile_times;

/* TP_LOG=debug: where a module's compile went. */
static void log_compile_times(const tp_plugin_host *host, const compile_times *times) {
    if (!host || !host->log) return;
    char line[256];
    snprintf(line, sizeof line,
             "stax: compiled %zu bytes of IR into a %zu-byte object: parse %.1f ms, optimise "
             "%.1f ms, code generation %.1f ms",
             times->ir_bytes, times->object_bytes, times->parse_ms, times->optimise_ms,
             times->emit_ms);
    host->log(host, TP_PLUGIN_LOG_DEBUG, line);
}

/* IR text -> optimised object bytes (malloc'd), for `cpu` with `features`.
 * Touches no state of the JIT's but the host triple, CPU and features read
 * at init, and logs nothing (times gets where the time went), so parts of a
 * graph compile on threads of their own, each in its own LLVMContext with
 * its own TargetMachine. */
static int32_t compile_object(const char *ir, const stax_jit_options *options, const char *cpu,
                              const char *features, void **object, size_t *object_size,
                              compile_times *times, char *error, size_t size) {
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
    *times = (compile_times){strlen(ir), status == TP_PLUGIN_OK ? *object_size : 0,
                             parsed - started, optimised - parsed, stax_clock_ms() - optimised};
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

static void release_locked(stax_module *module);

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
            compile_times times;
            status = text ? compile_object(text, options, host_cpu, host_features, &object,
                                           &object_size, &times, error, error_size)
                          : tpcommon_error(error, error_size, "stax: out of memory");
            free(text);
            if (status == TP_PLUGIN_OK) log_compile_times(options->host, &times);
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

/* ---- a graph compiled in parts, on threads of their own ---- */

typedef struct part_job {
    const stax_jit_options *options;
    char key[40];
    char *text; /* the part's IR, its key in place of STAXKEY */
    void *object;
    size_t object_size;
    int32_t status;
    compile_times times;
    char error[1024];
} part_job;

typedef struct part_queue {
    part_job *jobs;
    const int32_t *order; /* the jobs to compile */
    int32_t count;
    atomic_int next;
} part_queue;

/* A compile thread: takes the next part to compile until none is left. */
static void *compile_parts(void *argument) {
    part_queue *queue = argument;
    for (;;) {
        int32_t i = atomic_fetch_add(&queue->next, 1);
        if (i >= queue->count) return NULL;
        part_job *job = &queue->jobs[queue->order[i]];
        job->status = compile_object(job->text, job->options, host_cpu, host_features, &job->object,
                                     &job->object_size, &job->times, job->error, sizeof job->error);
    }
}

/* Compiles the parts `order` names on up to `threads` threads, the calling
 * one among them; returns how many threads compiled. Every thread started
 * is joined before it returns (one that cannot start leaves its share to
 * the others). */
static int32_t compile_parts_on_threads(part_job *jobs, const int32_t *order, int32_t count,
                                        int32_t threads) {
    part_queue queue = {jobs, order, count, 0};
    int32_t extra = (threads < count ? threads : count) - 1;
    pthread_t *started = extra > 0 ? calloc((size_t)extra, sizeof *started) : NULL;
    int32_t running = 0;
    for (int32_t t = 0; started && t < extra; t++)
        if (pthread_create(&started[running], NULL, compile_parts, &queue) == 0) running++;
    compile_parts(&queue);
    for (int32_t t = 0; t < running; t++) pthread_join(started[t], NULL);
    free(started);
    return running + 1;
}

/* The part's module from the memory cache, else from the disk cache; NULL
 * when it must be compiled. */
static stax_module *cached_part(const stax_jit_options *options, const char *ir, const char *key,
                                tpcommon_cache *disk, bool disk_cache, bool perf_map,
                                int *cache_hit) {
    for (stax_module *m = loaded; m; m = m->next)
        if (!m->parts && strcmp(m->key, key) == 0) {
            m->refcount++;
            *cache_hit = 1;
            return m;
        }
    if (!disk_cache) return NULL;
    char *disk_key = disk_cache_key(options->host, ir, options->opt_level);
    size_t object_size = 0;
    void *object = disk_key ? tpcommon_cache_read(disk, disk_key, &object_size) : NULL;
    stax_module *module = NULL;
    char ignored[256];
    if (object && add_object(key, object, object_size, perf_map, &module, ignored,
                             sizeof ignored) == TP_PLUGIN_OK)
        *cache_hit = 2;
    free(object);
    free(disk_key);
    return module;
}

/* A compiled part into the disk cache and the JIT. */
static int32_t load_compiled_part(const stax_jit_options *options, const char *ir, part_job *job,
                                  tpcommon_cache *disk, bool disk_cache, bool perf_map,
                                  stax_module **module, char *error, size_t error_size) {
    log_compile_times(options->host, &job->times);
    if (disk_cache) {
        char *disk_key = disk_cache_key(options->host, ir, options->opt_level);
        if (disk_key) tpcommon_cache_write(disk, disk_key, job->object, job->object_size);
        free(disk_key);
    }
    return add_object(job->key, job->object, job->object_size, perf_map, module, error, error_size);
}

static const char *readable_name(const char *name) {
    return strncmp(name, "STAXKEY_", 8) == 0 ? name + 8 : name;
}

/* Every part found in a cache or compiled (the ones to compile at once),
 * then loaded; jit_lock held. */
static int32_t load_parts(const stax_ir_parts *split, const stax_jit_options *options,
                          int32_t threads, const char *const *names, stax_module **modules,
                          part_job *jobs, int32_t *order, stax_jit_report *report, char *error,
                          size_t error_size) {
    bool perf_map = false;
    int32_t status = stax_perf_map_setting(options->host, &perf_map, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    tpcommon_cache disk;
    bool disk_cache = tpcommon_cache_open(&disk, options->host, "stax");
    int32_t to_compile = 0, from_disk = 0;
    for (int32_t q = 0; q < split->count; q++) {
        part_job *job = &jobs[q];
        job->options = options;
        make_key(split->parts[q].ir, options->opt_level, job->key);
        int hit = 0;
        modules[q] =
            cached_part(options, split->parts[q].ir, job->key, &disk, disk_cache, perf_map, &hit);
        from_disk += hit == 2;
        if (modules[q]) continue;
        job->text = with_key(split->parts[q].ir, job->key);
        if (!job->text) return tpcommon_error(error, error_size, "stax: out of memory");
        order[to_compile++] = q;
    }
    report->threads = to_compile ? compile_parts_on_threads(jobs, order, to_compile, threads) : 0;
    report->compiled = to_compile;
    report->cache_hit = to_compile ? 0 : from_disk ? 2 : 1;
    for (int32_t k = 0; k < to_compile && status == TP_PLUGIN_OK; k++) {
        int32_t q = order[k];
        const stax_ir_part *part = &split->parts[q];
        if (jobs[q].status != TP_PLUGIN_OK)
            status = tpcommon_error(
                error, error_size, "%s (compiling part %d of %d of the graph, kernels from '%s')",
                jobs[q].error, (int)q + 1, (int)split->count,
                part->first_name >= 0 ? readable_name(names[part->first_name]) : "?");
        else
            status = load_compiled_part(options, part->ir, &jobs[q], &disk, disk_cache, perf_map,
                                        &modules[q], error, error_size);
    }
    return status;
}

int32_t stax_jit_load_graph(const char *ir, const stax_jit_options *options, int32_t threads,
                            const char *const *names, int32_t num_names, void **addresses,
                            stax_module **out, stax_jit_report *report, char *error,
                            size_t error_size) {
    *out = NULL;
    *report = (stax_jit_report){.cache_hit = 0, .parts = 1, .threads = 1, .compiled = 1};
    bool dumping =
        (options->dump_ir && *options->dump_ir) || (options->dump_asm && *options->dump_asm);
    if (threads > STAX_JIT_MAX_COMPILE_THREADS) threads = STAX_JIT_MAX_COMPILE_THREADS;
    stax_ir_parts split = {0};
    if (stax_ir_split(ir, names, num_names, dumping ? 1 : threads, &split) != 0)
        return tpcommon_error(error, error_size, "stax: out of memory splitting the kernels");
    if (split.count <= 1) { /* one module: what the kernels reach of it */
        int32_t status = stax_jit_load(split.parts[0].ir, options, names, num_names, addresses, out,
                                       &report->cache_hit, error, error_size);
        stax_ir_parts_free(&split);
        if (report->cache_hit) report->threads = report->compiled = 0;
        return status;
    }
    report->parts = split.count;
    size_t count = (size_t)split.count;
    part_job *jobs = calloc(count, sizeof *jobs);
    int32_t *order = calloc(count, sizeof *order);
    stax_module *group = calloc(1, sizeof *group);
    stax_module **modules = calloc(count, sizeof *modules);
    pthread_mutex_lock(&jit_lock);
    int32_t status = !jit ? tpcommon_error(error, error_size, "stax: the JIT is not initialised")
                     : jobs && order && group && modules
                         ? TP_PLUGIN_OK
                         : tpcommon_error(error, error_size, "stax: out of memory");
    if (status == TP_PLUGIN_OK) {
        group->parts = modules;
        group->num_parts = split.count;
        group->refcount = 1;
        modules = NULL;
        status = load_parts(&split, options, threads, names, group->parts, jobs, order, report,
                            error, error_size);
    }
    for (int32_t i = 0; i < num_names && status == TP_PLUGIN_OK; i++)
        status = resolve(group->parts[split.part_of_name[i]], &names[i], 1, &addresses[i], error,
                         error_size);
    if (status == TP_PLUGIN_OK)
        *out = group;
    else if (group && group->parts)
        release_locked(group); /* the parts found or loaded so far, then the group */
    else
        free(group);
    pthread_mutex_unlock(&jit_lock);
    for (int32_t q = 0; jobs && q < split.count; q++) {
        free(jobs[q].text);
        free(jobs[q].object);
    }
    free(jobs);
    free(order);
    free(modules);
    stax_ir_parts_free(&split);
    return status;
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
    compile_times times;
    if (status == TP_PLUGIN_OK)
        status = compile_object(text, options, cpu, features, object, object_size, &times, error,
                                error_size);
    free(text);
    pthread_mutex_unlock(&jit_lock);
    return status;
}

int32_t stax_jit_load_object(const char key[40], const void *object, size_t object_size,
                             const char *const *names, int32_t num_names, void **addresses,
                             stax_module **out, char *error, size_t error_size) {
    *out = NULL;
    pthread_mutex_lock(&jit_lock);
    int32_t status =
        jit ? TP_PLUGIN_OK : tpcommon_error(error, error_size, "stax: the JIT is not initialised");
    stax_module *module = NULL;
    if (status == TP_PLUGIN_OK) {
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

static void release_locked(stax_module *module) {
    if (!module) return;
    if (module->parts) { /* a graph's parts: each holds a reference */
        for (int32_t q = 0; q < module->num_parts; q++) release_locked(module->parts[q]);
        free(module->parts);
        free(module);
        return;
    }
    if (--module->refcount == 0) {
        unlink_module(module);
        LLVMErrorRef err = LLVMOrcResourceTrackerRemove(module->tracker);
        if (err) LLVMConsumeError(err);
        LLVMOrcReleaseResourceTracker(module->tracker);
        free(module);
    }
}

void stax_module_release(stax_module *module) {
    if (!module) return;
    pthread_mutex_lock(&jit_lock);
    release_locked(module);
    pthread_mutex_unlock(&jit_lock);
}
