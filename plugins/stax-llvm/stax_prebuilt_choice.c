/* stax-llvm — the prebuilt micro-kernel objects' names, baselines and the
 * decision whether a host may run one (see stax_prebuilt.h). Plain C. */
#include <stdio.h>
#include <string.h>

#include "stax_prebuilt.h"
#include "tensorplay/plugin.h"

#define X86_64_V1 "+64bit,+cmov,+cx8,+fxsr,+mmx,+sse,+sse2"
#define X86_64_V2 X86_64_V1 ",+cx16,+popcnt,+sahf,+sse3,+sse4.1,+sse4.2,+ssse3"
#define X86_64_V3 X86_64_V2 ",+avx,+avx2,+bmi,+bmi2,+f16c,+fma,+lzcnt,+movbe,+xsave"
#define X86_64_V4 X86_64_V3 ",+avx512bw,+avx512cd,+avx512dq,+avx512f,+avx512vl,+evex512"

static const stax_prebuilt_baseline baseline_v1 = {"x86-64", X86_64_V1};
static const stax_prebuilt_baseline baseline_v3 = {"x86-64-v3", X86_64_V3};
static const stax_prebuilt_baseline baseline_v4 = {"x86-64-v4", X86_64_V4};

const stax_prebuilt_baseline *stax_prebuilt_baseline_for(bool legacy, const char *family_name) {
    if (!family_name) return legacy ? &baseline_v3 : NULL; /* the pair's <8 x float> fma */
    if (!strcmp(family_name, "avx512")) return &baseline_v4;
    if (!strcmp(family_name, "avx2")) return &baseline_v3;
    if (!strcmp(family_name, "generic")) return &baseline_v1;
    return NULL;
}

void stax_prebuilt_file_name(bool legacy, const char *family_name, char *out, size_t size) {
    if (!family_name)
        snprintf(out, size, "stax-gemm-legacy.prebuilt");
    else
        snprintf(out, size, "stax-gemm-%s%s.prebuilt", family_name, legacy ? "-legacy" : "");
}

int32_t stax_prebuilt_setting(const char *value, bool *use, char *error, size_t error_size) {
    *use = true;
    if (!value || !*value || !strcmp(value, "on")) return TP_PLUGIN_OK;
    if (!strcmp(value, "off")) {
        *use = false;
        return TP_PLUGIN_OK;
    }
    snprintf(error, error_size, "stax: STAX_PREBUILT_KERNELS is '%s'; use on or off (or unset it)",
             value);
    return TP_PLUGIN_ERROR;
}

/* Whether LLVM's feature string ("+avx2,-avx512f,...") enables `feature`
 * (given as "+name"). */
static bool enables(const char *features, const char *feature, size_t length) {
    for (const char *p = features; p && (p = strstr(p, feature)) != NULL; p += length)
        if ((p == features || p[-1] == ',') && (p[length] == ',' || p[length] == '\0')) return true;
    return false;
}

const char *stax_prebuilt_refusal(const char *triple, bool legacy, const char *family_name,
                                  const char *host_features, char *why, size_t why_size) {
    const stax_prebuilt_baseline *baseline = stax_prebuilt_baseline_for(legacy, family_name);
    if (!baseline) return "there is no prebuilt object for this library";
    if (!triple || strncmp(triple, "x86_64-", 7) != 0) {
        snprintf(why, why_size, "prebuilt objects are x86-64 code and the JIT targets %s",
                 triple ? triple : "?");
        return why;
    }
    for (const char *at = baseline->features; *at;) {
        size_t length = strcspn(at, ",");
        char feature[64];
        snprintf(feature, sizeof feature, "%.*s", (int)length, at);
        if (!enables(host_features ? host_features : "", feature, strlen(feature))) {
            snprintf(why, why_size, "the host lacks %.*s of the %s baseline (%s)", (int)length - 1,
                     at + 1, family_name ? family_name : "legacy", baseline->cpu);
            return why;
        }
        at += length + (at[length] == ',');
    }
    return NULL;
}
