/* f16 and bf16 conversions, exhaustively: every one of the 65,536 bit
 * patterns of each format widened to f32, and narrowing checked at every
 * rounding boundary (each representable value, each midpoint between two
 * neighbours and the f32/f64 values just either side of it, the overflow
 * threshold, infinities, NaNs). Oracles: NumPy's float16 for f16; for bf16,
 * which NumPy lacks, integer bit manipulation in Python written for this
 * test. Files travel through .npy (`<f2` and the bf16 convention of
 * docs/npy-bf16.md), so reading and writing those is checked on the way.
 *
 * Needs /usr/bin/python3 with NumPy (or the python in $TP_PYTHON); without
 * it the tests fail, saying so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorplay/ops.h"
#include "tensorplay/tensor.h"
#include "tp_test.h"

#define NEEDS_NUMPY "needs /usr/bin/python3 with NumPy (apt-get install python3-numpy)"

static const char *python_path(void) {
    const char *path = getenv("TP_PYTHON");
    if (!path || !*path || strstr(path, "NOTFOUND")) path = "/usr/bin/python3";
    return path;
}

static int run_python(const char *script) {
    char script_path[4096], command[8400];
    snprintf(script_path, sizeof script_path, "%s/half_oracle.py", tp_test_temp_dir());
    FILE *file = fopen(script_path, "w");
    ck_assert_ptr_nonnull(file);
    fputs(script, file);
    fclose(file);
    snprintf(command, sizeof command, "'%s' '%s' '%s'", python_path(), script_path,
             tp_test_temp_dir());
    int status = system(command);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static const char *temp_file(const char *name) {
    static char path[4300];
    snprintf(path, sizeof path, "%s/%s", tp_test_temp_dir(), name);
    return path;
}

static tp_tensor *load(const char *name, tp_dtype expected) {
    tp_tensor *tensor = NULL;
    ck_assert_msg(tp_npy_load(temp_file(name), &tensor) == TP_OK, "%s: %s", name, tp_last_error());
    ck_assert_msg(tp_tensor_dtype(tensor) == expected, "%s: read as %s, expected %s", name,
                  tp_dtype_name(tp_tensor_dtype(tensor)), tp_dtype_name(expected));
    return tensor;
}

static void save(const char *name, const tp_tensor *tensor) {
    ck_assert_msg(tp_npy_save(temp_file(name), tensor) == TP_OK, "%s: %s", name, tp_last_error());
}

/* The inputs: every pattern, and the narrowing probes in f32 and f64.
 * probes(h) lists, for the sorted finite values of a format (given as f64),
 * each value, each midpoint of neighbours, and the next float of `dtype`
 * below and above each midpoint; then the overflow threshold and its
 * neighbours, infinities and NaNs of both signs. */
static const char write_inputs[] =
    "import sys\n"
    "import numpy as np\n"
    "np.seterr(all='ignore')  # the probes overflow and cast NaNs on purpose\n"
    "folder = sys.argv[1]\n"
    "bits = np.arange(65536, dtype=np.uint16)\n"
    "np.save(folder + '/f16_all.npy', bits.view(np.float16))\n"
    "np.save(folder + '/bf16_all.npy', bits.view(np.dtype([('bfloat16', '<u2')])))\n"
    "def probes(values, largest, dtype):\n"
    "    v = np.unique(values[np.isfinite(values)])\n"
    "    mid = ((v[:-1] + v[1:]) / 2).astype(dtype)\n"
    "    inf = dtype(np.inf)\n"
    "    edge = np.array([largest, -largest], dtype)\n"
    "    extra = np.array([np.inf, -np.inf, np.nan, -np.nan], dtype)\n"
    "    out = np.concatenate([v.astype(dtype), mid, np.nextafter(mid, -inf),\n"
    "                          np.nextafter(mid, inf), edge, np.nextafter(edge, 0),\n"
    "                          np.nextafter(edge, edge * 2), extra])\n"
    "    return out.astype(dtype)\n"
    "f16 = bits.view(np.float16).astype(np.float64)\n"
    "bf16 = (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)\n"
    "f16_top = 65520.0  # 65504 + half an ulp: ties go to infinity\n"
    "bf16_top = float.fromhex('0x1.ff8p127')\n"
    "for name, values, top in (('f16', f16, f16_top), ('bf16', bf16, bf16_top)):\n"
    "    for dtype, tag in ((np.float32, 'f32'), (np.float64, 'f64')):\n"
    "        np.save(folder + '/%s_probe_%s.npy' % (name, tag), probes(values, top, dtype))\n";

static const char check_outputs[] =
    "import sys\n"
    "import numpy as np\n"
    "np.seterr(all='ignore')  # the probes overflow and cast NaNs on purpose\n"
    "folder = sys.argv[1]\n"
    "load = lambda name: np.load(folder + '/' + name)\n"
    "failures = 0\n"
    "def report(what, ours, want, sources):\n"
    "    global failures\n"
    "    bad = np.nonzero(ours != want)[0]\n"
    "    if bad.size:\n"
    "        failures += 1\n"
    "        i = bad[0]\n"
    "        print('%s: %d of %d differ; first at %d: source %r -> 0x%04x, expected 0x%04x' %\n"
    "              (what, bad.size, ours.size, i, sources[i], ours[i], want[i]))\n"
    "    else:\n"
    "        print('%s: %d values agree' % (what, ours.size))\n"
    "def u16(a):\n"
    "    return a.view(np.uint16) if a.dtype == np.float16 else a['bfloat16']\n"
    "def same_nan_class(ours, want, width):\n"
    "    # a NaN must stay a NaN of the same sign; its payload is free\n"
    "    exp_mask, frac_mask = (0x7C00, 0x3FF) if width == 'f16' else (0x7F80, 0x7F)\n"
    "    nan = ((want & exp_mask) == exp_mask) & ((want & frac_mask) != 0)\n"
    "    ours_nan = ((ours & exp_mask) == exp_mask) & ((ours & frac_mask) != 0)\n"
    "    ok = nan & ours_nan & ((ours >> 15) == (want >> 15))\n"
    "    return np.where(ok, want, ours)\n"
    "bits = np.arange(65536, dtype=np.uint16)\n"
    "# widening: bit-exact, NaN payloads included\n"
    "want = bits.view(np.float16).astype(np.float32).view(np.uint32)\n"
    "report('f16 -> f32 (cast)', load('f16_all_as_f32.npy').view(np.uint32), want, bits)\n"
    "want = bits.astype(np.uint32) << 16\n"
    "report('bf16 -> f32 (cast)', load('bf16_all_as_f32.npy').view(np.uint32), want, bits)\n"
    "# round trips through our own files\n"
    "report('f16 .npy round trip', u16(load('f16_all_again.npy')), bits, bits)\n"
    "report('bf16 .npy round trip', u16(load('bf16_all_again.npy')), bits, bits)\n"
    "# and the files are byte-identical to what np.save writes for the same arrays\n"
    "import io\n"
    "for name, array in (('f16_all_again.npy', bits.view(np.float16)),\n"
    "                    ('bf16_all_again.npy', bits.view(np.dtype([('bfloat16', '<u2')])))):\n"
    "    buffer = io.BytesIO()\n"
    "    np.save(buffer, array)\n"
    "    with open(folder + '/' + name, 'rb') as f:\n"
    "        ours = f.read()\n"
    "    if ours != buffer.getvalue():\n"
    "        failures += 1\n"
    "        print('%s differs from np.save: %r vs %r' % (name, ours[:96], "
    "buffer.getvalue()[:96]))\n"
    "    else:\n"
    "        print('%s: byte-identical to np.save' % name)\n"
    "# f16 narrowing: NumPy's float16 conversion (one rounding from the source)\n"
    "for tag in ('f32', 'f64'):\n"
    "    src = load('f16_probe_%s.npy' % tag)\n"
    "    want = src.astype(np.float16).view(np.uint16)\n"
    "    for how in ('cast', 'direct'):\n"
    "        ours = u16(load('f16_probe_%s_%s.npy' % (tag, how)))\n"
    "        report('%s -> f16 (%s)' % (tag, how), same_nan_class(ours, want, 'f16'), want, src)\n"
    "# bf16 narrowing oracle: exact integer rounding of the source's significand\n"
    "def bf16_oracle(x):\n"
    "    x = float(x)\n"
    "    if x != x:\n"
    "        return 0xFFC0 if np.signbit(x) else 0x7FC0\n"
    "    sign = 0x8000 if np.signbit(x) else 0\n"
    "    if x in (float('inf'), float('-inf')):\n"
    "        return sign | 0x7F80\n"
    "    if x == 0:\n"
    "        return sign\n"
    "    m, e = np.frexp(abs(x))  # abs(x) = m * 2**e, 0.5 <= m < 1\n"
    "    significand = int(m * 2**53)  # exact: abs(x) = significand * 2**(e - 53)\n"
    "    quantum = max(int(e) - 1 - 7, -133)  # bf16 spacing at this magnitude\n"
    "    shift = quantum - (int(e) - 53)\n"
    "    if shift <= 0:\n"
    "        steps = significand << -shift\n"
    "    else:\n"
    "        steps, rest = significand >> shift, significand & ((1 << shift) - 1)\n"
    "        half = 1 << (shift - 1)\n"
    "        if rest > half or (rest == half and steps & 1):\n"
    "            steps += 1\n"
    "    value = steps * 2.0**quantum\n"
    "    if value >= 2.0**128:\n"
    "        return sign | 0x7F80\n"
    "    return sign | int(np.array([value], np.float32).view(np.uint32)[0] >> 16)\n"
    "for tag in ('f32', 'f64'):\n"
    "    src = load('bf16_probe_%s.npy' % tag)\n"
    "    want = np.array([bf16_oracle(x) for x in src], np.uint16)\n"
    "    if tag == 'f32':  # a second, classic formula agrees on f32 sources\n"
    "        u = src.view(np.uint32).astype(np.uint64)\n"
    "        classic = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)\n"
    "        classic = np.where(np.isnan(src), want, classic)\n"
    "        report('bf16 oracles agree', classic, want, src)\n"
    "    for how in ('cast', 'direct'):\n"
    "        ours = u16(load('bf16_probe_%s_%s.npy' % (tag, how)))\n"
    "        report('%s -> bf16 (%s)' % (tag, how), same_nan_class(ours, want, 'bf16'), want, "
    "src)\n"
    "sys.exit(1 if failures else 0)\n";

/* Narrowing by the public scalar functions, element by element. */
static tp_tensor *narrow_directly(const tp_tensor *source, tp_dtype to) {
    tp_tensor *out = NULL;
    ck_assert_int_eq(tp_tensor_create(to, tp_tensor_ndim(source), tp_tensor_shape(source), &out),
                     TP_OK);
    uint16_t *bits = tp_tensor_data_mut(out);
    const void *data = tp_tensor_data(source);
    for (int64_t i = 0; i < tp_tensor_numel(source); i++) {
        if (tp_tensor_dtype(source) == TP_F32) {
            float value = ((const float *)data)[i];
            bits[i] = to == TP_F16 ? tp_f16_from_f32(value) : tp_bf16_from_f32(value);
        } else {
            double value = ((const double *)data)[i];
            bits[i] = to == TP_F16 ? tp_f16_from_f64(value) : tp_bf16_from_f64(value);
        }
    }
    return out;
}

static void convert_and_save(tp_ctx *ctx, const char *input, tp_dtype input_dtype, tp_dtype to,
                             const char *output_stem) {
    tp_tensor *source = load(input, input_dtype);
    char name[256];
    snprintf(name, sizeof name, "%s_cast.npy", output_stem);
    tp_tensor *cast = tp_cast(ctx, source, to);
    ck_assert_msg(cast != NULL, "cast %s to %s: %s", input, tp_dtype_name(to), tp_last_error());
    save(name, cast);
    if (to == TP_F16 || to == TP_BF16) {
        snprintf(name, sizeof name, "%s_direct.npy", output_stem);
        tp_tensor *direct = narrow_directly(source, to);
        save(name, direct);
        tp_tensor_release(direct);
    }
    tp_tensor_release(source);
}

START_TEST(every_pattern_and_rounding_boundary_matches_the_oracles) {
    char command[4200];
    snprintf(command, sizeof command, "'%s' -c 'import numpy' 2>/dev/null", python_path());
    ck_assert_msg(system(command) == 0, NEEDS_NUMPY " (tried '%s')", python_path());
    ck_assert_int_eq(run_python(write_inputs), 0);

    tp_ctx *ctx = tp_ctx_create();
    static const struct {
        const char *name;
        tp_dtype dtype;
    } all[] = {{"f16", TP_F16}, {"bf16", TP_BF16}};
    for (int k = 0; k < 2; k++) {
        char input[64], output[64];
        snprintf(input, sizeof input, "%s_all.npy", all[k].name);
        tp_tensor *patterns = load(input, all[k].dtype);
        ck_assert_int_eq(tp_tensor_numel(patterns), 65536);
        snprintf(output, sizeof output, "%s_all_again.npy", all[k].name);
        save(output, patterns);
        tp_tensor *widened = tp_cast(ctx, patterns, TP_F32);
        ck_assert_msg(widened != NULL, "%s", tp_last_error());
        snprintf(output, sizeof output, "%s_all_as_f32.npy", all[k].name);
        save(output, widened);
        tp_tensor_release(patterns);
        static const struct {
            const char *tag;
            tp_dtype dtype;
        } sources[] = {{"f32", TP_F32}, {"f64", TP_F64}};
        for (int s = 0; s < 2; s++) {
            snprintf(input, sizeof input, "%s_probe_%s.npy", all[k].name, sources[s].tag);
            snprintf(output, sizeof output, "%s_probe_%s", all[k].name, sources[s].tag);
            convert_and_save(ctx, input, sources[s].dtype, all[k].dtype, output);
        }
    }
    tp_ctx_destroy(ctx);
    ck_assert_msg(run_python(check_outputs) == 0, "a conversion disagrees with its oracle (above)");
}
END_TEST

TP_TEST_SUITE(half_numpy) {
    Suite *suite = suite_create("tensor.half_numpy");
    TCase *exhaustive = tcase_create("exhaustive");
    tcase_set_timeout(exhaustive, 120);
    tcase_add_test(exhaustive, every_pattern_and_rounding_boundary_matches_the_oracles);
    suite_add_tcase(suite, exhaustive);
    return suite;
}
