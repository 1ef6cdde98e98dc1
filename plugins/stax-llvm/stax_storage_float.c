/* stax-llvm — widening runs of f16/bf16 elements to f32 on the C side
 * (stax_storage_float.h): what the packed matmul's packing calls per row of
 * A or B. Owns only that loop and its F16C fast path. */
#include "stax_storage_float.h"

#include <stdbool.h>

#include "stax_cpu.h"

#ifdef STAX_CPU_X86
#include <immintrin.h>
#define STAX_HAVE_F16C_PATH 1
#endif

#ifdef STAX_HAVE_F16C_PATH
__attribute__((target("avx,f16c"))) static void f16_run_to_f32_f16c(const uint16_t *in, float *out,
                                                                    int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
    for (; i < n; i++) out[i] = stax_f16_to_f32(in[i]);
}
#endif

void stax_storage_floats_to_f32(int32_t dtype, const uint16_t *in, int64_t stride, float *out,
                                int64_t n) {
    if (dtype == TP_PLUGIN_BF16) {
        for (int64_t i = 0; i < n; i++) out[i] = stax_bf16_to_f32(in[i * stride]);
        return;
    }
#ifdef STAX_HAVE_F16C_PATH
    if (stride == 1 && stax_cpu_has_f16c()) {
        f16_run_to_f32_f16c(in, out, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) out[i] = stax_f16_to_f32(in[i * stride]);
}
