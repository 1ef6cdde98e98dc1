/* stax-llvm — which prebuilt micro-kernel object a library may use, and
 * whether this host may run it (stax_prebuilt_choice.c: plain C, no LLVM, so
 * the tests compile it in and check the decisions on any host). Loading and
 * generating the objects is stax_gemm_prebuilt.c's. */
#ifndef STAX_PREBUILT_H
#define STAX_PREBUILT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The CPU every host of a family can run: an LLVM CPU name and the LLVM
 * features it implies, spelled out ("+avx,+avx2,..."), which are both the
 * library IR's attributes and what the host must have. */
typedef struct stax_prebuilt_baseline {
    const char *cpu;
    const char *features;
} stax_prebuilt_baseline;

/* The baseline of the library holding `family_name`'s kernels (NULL: none)
 * and/or the legacy pair; NULL when there is no prebuilt for it. */
const stax_prebuilt_baseline *stax_prebuilt_baseline_for(bool legacy, const char *family_name);

/* The object's file name beside the plugin: stax-gemm-FAMILY.prebuilt,
 * stax-gemm-FAMILY-legacy.prebuilt (with the legacy pair), or
 * stax-gemm-legacy.prebuilt (the pair alone). */
void stax_prebuilt_file_name(bool legacy, const char *family_name, char *out, size_t size);

/* STAX_PREBUILT_KERNELS: unset, "" or "on" -> *use = true; "off" -> false;
 * anything else is an error naming the variable. */
int32_t stax_prebuilt_setting(const char *value, bool *use, char *error, size_t error_size);

/* Why the prebuilt object of (legacy, family_name) cannot serve a JIT for
 * `triple` on a host with LLVM features `host_features`, or NULL when it can:
 * no prebuilt for that library or triple, or a baseline feature the host
 * lacks (a forced STAX_GEMM_KERNEL=avx512 on an AVX2 host). */
const char *stax_prebuilt_refusal(const char *triple, bool legacy, const char *family_name,
                                  const char *host_features, char *why, size_t why_size);

#endif
