/* tp-bench's choice of OpenBLAS kernels (tools/tp-bench/openblas_core.c):
 * which core a host with given /proc/cpuinfo flags runs in place of the one
 * OpenBLAS picked. The flag lists are cut from real machines' cpuinfo. */
#include <stddef.h>

#include "openblas_core.h"
#include "tp_test.h"

/* Emerald Rapids (family 6, model 207), where Debian's OpenBLAS 0.3.21
 * falls back to Prescott. */
static const char emerald_rapids[] =
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr "
    "sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology nonstop_tsc "
    "cpuid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt "
    "aes xsave avx f16c rdrand hypervisor lahf_lm abm 3dnowprefetch fsgsbase bmi1 avx2 smep bmi2 "
    "erms invpcid avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni "
    "avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves avx_vnni avx512_bf16 wbnoinvd arat "
    "avx512vbmi umip pku ospke waitpkg avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni "
    "avx512_bitalg avx512_vpopcntdq rdpid cldemote movdiri movdir64b md_clear serialize "
    "tsxldtrk amx_bf16 avx512_fp16 amx_tile amx_int8 flush_l1d arch_capabilities\n";

/* Skylake-SP: AVX-512 without bf16. */
static const char skylake_sp[] =
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr "
    "sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl pni pclmulqdq ssse3 "
    "fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand hypervisor "
    "lahf_lm abm 3dnowprefetch fsgsbase bmi1 hle avx2 smep bmi2 erms invpcid rtm mpx avx512f "
    "avx512dq rdseed adx smap clflushopt clwb avx512cd avx512bw avx512vl xsaveopt xsavec xsaves";

/* Zen 3: AVX2 and FMA, no AVX-512. */
static const char zen3[] =
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr "
    "sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm rep_good nopl cpuid extd_apicid "
    "tsc_known_freq pni pclmulqdq ssse3 fma cx16 sse4_1 sse4_2 x2apic movbe popcnt aes xsave "
    "avx f16c rdrand hypervisor lahf_lm cmp_legacy cr8_legacy abm sse4a misalignsse "
    "3dnowprefetch osvw topoext fsgsbase bmi1 avx2 smep bmi2 erms invpcid rdseed adx smap "
    "clflushopt clwb sha_ni xsaveopt xsavec xgetbv1 xsaves clzero xsaveerptr rdpid fsrm";

/* Sandy Bridge: AVX only. */
static const char sandy_bridge[] =
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi "
    "mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc pni pclmulqdq "
    "ssse3 cx16 sse4_1 sse4_2 x2apic popcnt aes xsave avx lahf_lm";

static const char sse_only[] = "fpu tsc msr cx8 apic cmov mmx fxsr sse sse2 pni ssse3 sse4_1";

START_TEST(a_fallback_core_on_avx512_host_gets_the_avx512_core_the_host_runs) {
    ck_assert_str_eq(bench_openblas_better_core("Prescott", emerald_rapids), "Cooperlake");
    ck_assert_str_eq(bench_openblas_better_core("Nehalem", emerald_rapids), "Cooperlake");
    ck_assert_str_eq(bench_openblas_better_core("Prescott", skylake_sp), "SkylakeX");
}
END_TEST

START_TEST(a_narrower_vector_core_than_the_host_is_raised_too) {
    ck_assert_str_eq(bench_openblas_better_core("Haswell", skylake_sp), "SkylakeX");
    ck_assert_str_eq(bench_openblas_better_core("Sandybridge", emerald_rapids), "Cooperlake");
    ck_assert_str_eq(bench_openblas_better_core("Prescott", zen3), "Haswell");
    ck_assert_str_eq(bench_openblas_better_core("Core2", sandy_bridge), "Sandybridge");
}
END_TEST

START_TEST(a_core_as_wide_as_the_host_is_left_alone) {
    ck_assert_ptr_null(bench_openblas_better_core("Cooperlake", emerald_rapids));
    ck_assert_ptr_null(bench_openblas_better_core("SkylakeX", emerald_rapids));
    ck_assert_ptr_null(bench_openblas_better_core("SapphireRapids", emerald_rapids));
    ck_assert_ptr_null(bench_openblas_better_core("SkylakeX", skylake_sp));
    ck_assert_ptr_null(bench_openblas_better_core("Zen", zen3));
    ck_assert_ptr_null(bench_openblas_better_core("Haswell", zen3));
    ck_assert_ptr_null(bench_openblas_better_core("Sandybridge", sandy_bridge));
    ck_assert_ptr_null(bench_openblas_better_core("Prescott", sse_only));
}
END_TEST

START_TEST(core_names_compare_without_case) {
    /* a DYNAMIC_ARCH build says "Prescott"; a build for one core says "PRESCOTT" */
    ck_assert_str_eq(bench_openblas_better_core("PRESCOTT", zen3), "Haswell");
    ck_assert_ptr_null(bench_openblas_better_core("haswell", zen3));
}
END_TEST

START_TEST(unknown_cores_and_missing_input_are_never_second_guessed) {
    ck_assert_ptr_null(bench_openblas_better_core("NeoverseN1", emerald_rapids));
    ck_assert_ptr_null(bench_openblas_better_core("Unknown", emerald_rapids));
    ck_assert_ptr_null(bench_openblas_better_core("", emerald_rapids));
    ck_assert_ptr_null(bench_openblas_better_core(NULL, emerald_rapids));
    ck_assert_ptr_null(bench_openblas_better_core("Prescott", NULL));
    ck_assert_ptr_null(bench_openblas_better_core("Prescott", "")); /* no flags line: not x86 */
}
END_TEST

START_TEST(flags_match_as_whole_words) {
    /* "avx2" alone is neither "avx" nor AVX2 without "fma"; "avx512fp16"-like
     * names do not stand for "avx512f" */
    ck_assert_ptr_null(bench_openblas_better_core("Prescott", "sse sse2 avx2"));
    ck_assert_ptr_null(bench_openblas_better_core(
        "Prescott", "sse2 avx512fx avx512cdx avx512bwx avx512dqx avx512vlx"));
    ck_assert_str_eq(bench_openblas_better_core("Prescott", "sse2 avx2 fma"), "Haswell");
    ck_assert_str_eq(bench_openblas_better_core("Prescott", "avx\tsse2"), "Sandybridge");
    /* AVX-512 needs the whole SkylakeX set: without vl it is an AVX2 host */
    ck_assert_str_eq(
        bench_openblas_better_core("Prescott", "avx avx2 fma avx512f avx512cd avx512bw avx512dq"),
        "Haswell");
}
END_TEST

TP_TEST_SUITE(openblas_core) {
    Suite *suite = suite_create("bench.openblas_core");
    TCase *tc = tcase_create("openblas_core");
    tcase_add_test(tc, a_fallback_core_on_avx512_host_gets_the_avx512_core_the_host_runs);
    tcase_add_test(tc, a_narrower_vector_core_than_the_host_is_raised_too);
    tcase_add_test(tc, a_core_as_wide_as_the_host_is_left_alone);
    tcase_add_test(tc, core_names_compare_without_case);
    tcase_add_test(tc, unknown_cores_and_missing_input_are_never_second_guessed);
    tcase_add_test(tc, flags_match_as_whole_words);
    suite_add_tcase(suite, tc);
    return suite;
}
