/* First light: one fused pointwise graph on opencl equals eager. */
#include <check.h>

#include "ocl_harness.h"
#include "tp_test.h"

START_TEST(fused_pointwise_matches_eager) {
    oclt_check_text("graph g(%x: f32[1000]) {\n"
                    "  %two: f32[] = full() {shape=[], value=2, dtype=f32}\n"
                    "  %one: f32[] = full() {shape=[], value=1, dtype=f32}\n"
                    "  %a: f32[1000] = mul(%x, %two)\n"
                    "  %b: f32[1000] = add(%a, %one)\n"
                    "  %c: f32[1000] = tanh(%b)\n"
                    "  %y: f32[1000] = mul(%c, %x)\n"
                    "  return %y\n"
                    "}\n",
                    1);
}
END_TEST

TP_TEST_SUITE(opencl_smoke) {
    oclt_environment();
    Suite *suite = suite_create("opencl_smoke");
    TCase *tc = tcase_create("smoke");
    tcase_add_test(tc, fused_pointwise_matches_eager);
    suite_add_tcase(suite, tc);
    return suite;
}
