/* tp-bench — OpenBLAS's kernels for this CPU. An OpenBLAS built with
 * DYNAMIC_ARCH picks its kernels ("core") from the CPU's model when it is
 * loaded; a release older than the CPU does not know the model and falls
 * back to its oldest x86-64 core, Prescott (SSE3). Debian 12's 0.3.21 does
 * that on an Emerald Rapids host (family 6, model 207): sgemm runs there at
 * about a seventh of its AVX-512 kernels' speed, a baseline that would make
 * stax look several times faster than OpenBLAS is. So before anything loads
 * OpenBLAS for timing, tp-bench asks it which core it picked and, when that
 * core uses a narrower vector extension than the host has, starts itself
 * again with OPENBLAS_CORETYPE naming the newest core the host runs (the
 * NumPy helper inherits it: Debian's NumPy uses the same library). A
 * user's own OPENBLAS_CORETYPE is never changed. The choice is printed with
 * the results, so a reader knows which OpenBLAS the ratios are against. */
#define _GNU_SOURCE
#include "openblas_core.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Set by the first process for the restarted one: the core OpenBLAS picked. */
#define PICKED_VARIABLE "TP_BENCH_OPENBLAS_PICKED"

typedef enum vector_level { SSE, AVX, AVX2, AVX512 } vector_level;

/* OpenBLAS's x86-64 cores (openblas_get_corename's names) by the widest
 * vector extension their kernels use. */
static const struct {
    const char *name;
    vector_level level;
} known_cores[] = {
    {"Katmai", SSE},        {"Coppermine", SSE},
    {"Northwood", SSE},     {"Prescott", SSE},
    {"Banias", SSE},        {"Atom", SSE},
    {"Core2", SSE},         {"Penryn", SSE},
    {"Dunnington", SSE},    {"Nehalem", SSE},
    {"Athlon", SSE},        {"Opteron", SSE},
    {"Opteron_SSE3", SSE},  {"Barcelona", SSE},
    {"Nano", SSE},          {"Bobcat", SSE},
    {"Sandybridge", AVX},   {"Bulldozer", AVX},
    {"Piledriver", AVX},    {"Steamroller", AVX},
    {"Excavator", AVX2},    {"Haswell", AVX2},
    {"Zen", AVX2},          {"SkylakeX", AVX512},
    {"Cooperlake", AVX512}, {"SapphireRapids", AVX512},
};

/* Whether the whitespace-separated flag list holds `flag` as a whole word. */
static bool has_flag(const char *flags, const char *flag) {
    size_t length = strlen(flag);
    for (const char *p = flags; (p = strstr(p, flag)) != NULL; p += length)
        if ((p == flags || isspace((unsigned char)p[-1])) &&
            (p[length] == '\0' || isspace((unsigned char)p[length])))
            return true;
    return false;
}

static vector_level host_level(const char *flags) {
    if (has_flag(flags, "avx512f") && has_flag(flags, "avx512cd") && has_flag(flags, "avx512bw") &&
        has_flag(flags, "avx512dq") && has_flag(flags, "avx512vl"))
        return AVX512;
    if (has_flag(flags, "avx2") && has_flag(flags, "fma")) return AVX2;
    if (has_flag(flags, "avx")) return AVX;
    return SSE;
}

const char *bench_openblas_better_core(const char *picked, const char *cpu_flags) {
    if (!picked || !cpu_flags) return NULL;
    for (size_t i = 0; i < sizeof known_cores / sizeof *known_cores; i++) {
        if (strcasecmp(picked, known_cores[i].name)) continue;
        vector_level host = host_level(cpu_flags);
        if (known_cores[i].level >= host) return NULL;
        switch (host) {
        case AVX512:
            return has_flag(cpu_flags, "avx512_bf16") ? "Cooperlake" : "SkylakeX";
        case AVX2:
            return "Haswell";
        case AVX:
            return "Sandybridge";
        case SSE:
            return NULL;
        }
    }
    return NULL;
}

/* The first "flags" line of /proc/cpuinfo (x86), or "" where there is none. */
static const char *cpu_flags(void) {
    static char flags[8192];
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return "";
    char line[sizeof flags];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            const char *colon = strchr(line, ':');
            snprintf(flags, sizeof flags, "%s", colon ? colon + 1 : "");
            break;
        }
    fclose(f);
    return flags;
}

typedef struct openblas_info {
    const char *core;   /* openblas_get_corename(), or NULL without OpenBLAS */
    const char *config; /* openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
} openblas_info;

static openblas_info load_openblas(void) {
    openblas_info info = {NULL, ""};
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return info;
    typedef char *(*text_fn)(void);
    text_fn corename = (text_fn)dlsym(lib, "openblas_get_corename");
    text_fn config = (text_fn)dlsym(lib, "openblas_get_config");
    if (corename) info.core = corename();
    if (config && config()) info.config = config();
    return info; /* stays loaded: the baselines open the same library */
}

static bool variable_set(const char *name) {
    const char *value = getenv(name);
    return value && *value;
}

void bench_openblas_choose_core(char **argv) {
    if (variable_set("OPENBLAS_CORETYPE")) return; /* the user's, or set for this restart */
    openblas_info info = load_openblas();
    const char *better = bench_openblas_better_core(info.core, cpu_flags());
    if (!better) return;
    setenv(PICKED_VARIABLE, info.core, 1);
    setenv("OPENBLAS_CORETYPE", better, 1);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    fprintf(stderr,
            "tp-bench: OpenBLAS picked its %s kernels on this CPU, which it does not know, and "
            "tp-bench could not restart itself with OPENBLAS_CORETYPE=%s; run it with that "
            "variable set for a fair OpenBLAS baseline\n",
            info.core, better);
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv(PICKED_VARIABLE);
}

/* "0.3.21" out of "OpenBLAS 0.3.21 DYNAMIC_ARCH ...", or "". */
static void openblas_version(const char *config, char *out, size_t size) {
    out[0] = '\0';
    if (strncmp(config, "OpenBLAS ", 9)) return;
    size_t length = strcspn(config + 9, " ");
    snprintf(out, size, "%.*s", (int)length, config + 9);
}

void bench_openblas_print_core(bool json) {
    openblas_info info = load_openblas();
    if (!info.core) return;
    char version[64];
    openblas_version(info.config, version, sizeof version);
    const char *picked = getenv(PICKED_VARIABLE);
    bool by_bench = picked && *picked && variable_set("OPENBLAS_CORETYPE");
    bool by_user = !by_bench && variable_set("OPENBLAS_CORETYPE");
    if (json) {
        printf(
            "{\"case\":\"openblas-core\",\"version\":\"%s\",\"core\":\"%s\",\"chosen_by\":\"%s\"",
            version, info.core,
            by_bench  ? "tp-bench"
            : by_user ? "user"
                      : "openblas");
        if (by_bench) printf(",\"openblas_picked\":\"%s\"", picked);
        printf("}\n");
    } else if (by_bench) {
        printf("OpenBLAS %s: %s kernels, set by tp-bench (OPENBLAS_CORETYPE): it picked %s on this "
               "CPU, which it does not know\n",
               version, info.core, picked);
    } else {
        printf("OpenBLAS %s: %s kernels (%s)\n", version, info.core,
               by_user ? "OPENBLAS_CORETYPE set by the user" : "its own choice for this CPU");
    }
}
