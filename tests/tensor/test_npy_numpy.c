/* .npy interop with NumPy, the independent oracle: NumPy writes files (format
 * 1.0, 2.0 and 3.0) that we read, and NumPy reads the files we write. Every
 * file holds values from one formula that both sides compute on their own.
 *
 * Needs /usr/bin/python3 with NumPy (or the python in $TP_PYTHON). Without it
 * these tests fail, saying so: they never pass silently. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorplay/tensor.h"
#include "tp_test.h"

#define NEEDS_NUMPY "needs /usr/bin/python3 with NumPy (apt-get install python3-numpy)"

static const char *python_path(void) {
    const char *path = getenv("TP_PYTHON");
    if (!path || !*path || strstr(path, "NOTFOUND")) path = "/usr/bin/python3";
    return path;
}

/* Runs `script` (Python source) with the temp folder as argv[1]; returns the
 * exit status (its output goes to the test's output). */
static int run_python(const char *script) {
    char script_path[4096], command[8400];
    snprintf(script_path, sizeof script_path, "%s/oracle.py", tp_test_temp_dir());
    FILE *file = fopen(script_path, "w");
    ck_assert_ptr_nonnull(file);
    fputs(script, file);
    fclose(file);
    snprintf(command, sizeof command, "'%s' '%s' '%s'", python_path(), script_path,
             tp_test_temp_dir());
    int status = system(command);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void require_numpy(void) {
    char command[4200];
    snprintf(command, sizeof command, "'%s' -c 'import numpy' 2>/dev/null", python_path());
    int status = system(command);
    ck_assert_msg(status == 0, NEEDS_NUMPY " (tried '%s')", python_path());
}

/* The cases both sides agree on: dtype names in both worlds and shapes. */
static const struct {
    tp_dtype dtype;
    const char *numpy;
} dtypes[] = {{TP_F32, "float32"},
              {TP_F64, "float64"},
              {TP_I32, "int32"},
              {TP_I64, "int64"},
              {TP_BOOL, "bool"}};
#define NUM_DTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

static const struct {
    int ndim;
    int64_t shape[TP_MAX_DIMS];
    const char *tuple;
} shapes[] = {
    {0, {0}, "()"},
    {1, {0}, "(0,)"},
    {3, {3, 0, 2}, "(3, 0, 2)"},
    {1, {7}, "(7,)"},
    {2, {2, 3}, "(2, 3)"},
    {8, {2, 1, 2, 1, 2, 1, 3, 1}, "(2, 1, 2, 1, 2, 1, 3, 1)"},
};
#define NUM_SHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* Python side of the formula: element i is i*1.5 - 3 converted to the dtype
 * (integers truncate toward zero), bools are i % 3 == 1. */
static const char python_prelude[] =
    "import sys, io\n"
    "import numpy as np\n"
    "folder = sys.argv[1]\n"
    "def values(dtype, shape):\n"
    "    n = int(np.prod(shape, dtype=np.int64))\n"
    "    i = np.arange(n)\n"
    "    v = (i % 3 == 1) if dtype == 'bool' else (i * 1.5 - 3).astype(dtype)\n"
    "    return v.reshape(shape)\n";

/* C side of the same formula. */
static double expected_value(tp_dtype dtype, int64_t i) {
    double v = (double)i * 1.5 - 3;
    switch (dtype) {
    case TP_F32:
        return (float)v;
    case TP_I32:
        return (int32_t)v;
    case TP_I64:
        return (double)(int64_t)v;
    case TP_BOOL:
        return i % 3 == 1;
    default:
        return v;
    }
}

/* Writes "CASES = [(file, dtype, shape), ...]" for every dtype x shape. */
static void append_cases(char *script, size_t size, const char *prefix) {
    size_t used = strlen(script);
    used += (size_t)snprintf(script + used, size - used, "CASES = [\n");
    for (int d = 0; d < NUM_DTYPES; d++)
        for (int s = 0; s < NUM_SHAPES; s++)
            used += (size_t)snprintf(script + used, size - used, "  ('%s_%s_%d.npy', '%s', %s),\n",
                                     prefix, dtypes[d].numpy, s, dtypes[d].numpy, shapes[s].tuple);
    snprintf(script + used, size - used, "]\n");
}

static char *case_path(const char *prefix, int d, int s) {
    static char path[4300];
    snprintf(path, sizeof path, "%s/%s_%s_%d.npy", tp_test_temp_dir(), prefix, dtypes[d].numpy, s);
    return path;
}

static void expect_formula(const tp_tensor *t, int d, int s, const char *path) {
    char text[128];
    ck_assert_msg(tp_tensor_dtype(t) == dtypes[d].dtype && tp_tensor_ndim(t) == shapes[s].ndim,
                  "%s: got %s", path, tp_tensor_describe(t, text, sizeof text));
    for (int i = 0; i < shapes[s].ndim; i++)
        ck_assert_int_eq(tp_tensor_dim(t, i), shapes[s].shape[i]);
    for (int64_t i = 0; i < tp_tensor_numel(t); i++)
        ck_assert_msg(tp_tensor_get_f64(t, i) == expected_value(dtypes[d].dtype, i),
                      "%s: element %lld is %g, expected %g", path, (long long)i,
                      tp_tensor_get_f64(t, i), expected_value(dtypes[d].dtype, i));
}

static void read_numpy_files_written_as(const char *writer, const char *prefix) {
    require_numpy();
    char script[16384];
    snprintf(script, sizeof script, "%s", python_prelude);
    append_cases(script, sizeof script, prefix);
    size_t used = strlen(script);
    snprintf(script + used, sizeof script - used,
             "for name, dtype, shape in CASES:\n"
             "    with open(folder + '/' + name, 'wb') as f:\n"
             "        %s\n",
             writer);
    ck_assert_int_eq(run_python(script), 0);
    for (int d = 0; d < NUM_DTYPES; d++)
        for (int s = 0; s < NUM_SHAPES; s++) {
            const char *path = case_path(prefix, d, s);
            tp_tensor *t = NULL;
            ck_assert_msg(tp_npy_load(path, &t) == TP_OK, "%s", tp_last_error());
            expect_formula(t, d, s, path);
            tp_tensor_release(t);
        }
}

START_TEST(reads_files_written_by_numpy_save) {
    read_numpy_files_written_as("np.save(f, values(dtype, shape))", "v1");
}
END_TEST

START_TEST(reads_format_2_0_written_by_numpy) {
    read_numpy_files_written_as(
        "np.lib.format.write_array(f, values(dtype, shape), version=(2, 0))", "v2");
}
END_TEST

START_TEST(reads_format_3_0_written_by_numpy) {
    read_numpy_files_written_as(
        "np.lib.format.write_array(f, values(dtype, shape), version=(3, 0))", "v3");
}
END_TEST

START_TEST(reads_numpy_file_with_non_contiguous_source_made_contiguous) {
    /* NumPy writes a transposed (non-contiguous C) array in Fortran order,
     * which we refuse; the fix in our message works. */
    require_numpy();
    char script[4096];
    snprintf(script, sizeof script,
             "%s"
             "a = values('float64', (2, 3))\n"
             "np.save(folder + '/t.npy', a.T)\n"
             "np.save(folder + '/c.npy', np.ascontiguousarray(a.T))\n",
             python_prelude);
    ck_assert_int_eq(run_python(script), 0);
    char path[4200];
    tp_tensor *t = NULL;
    snprintf(path, sizeof path, "%s/t.npy", tp_test_temp_dir());
    ck_assert_int_eq(tp_npy_load(path, &t), TP_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "numpy.ascontiguousarray"));
    snprintf(path, sizeof path, "%s/c.npy", tp_test_temp_dir());
    ck_assert_int_eq(tp_npy_load(path, &t), TP_OK);
    /* a.T[i][j] = a[j][i] = 1.5 * (3 j + i) - 3 */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            ck_assert_double_eq(tp_tensor_get_f64(t, i * 2 + j), 1.5 * (3 * j + i) - 3);
    tp_tensor_release(t);
}
END_TEST

START_TEST(reads_big_endian_numpy_file_only_after_the_suggested_fix) {
    require_numpy();
    char script[4096];
    snprintf(script, sizeof script,
             "%s"
             "np.save(folder + '/be.npy', values('float32', (4,)).astype('>f4'))\n"
             "np.save(folder + '/le.npy', values('float32', (4,)).astype('>f4').astype('<f4'))\n",
             python_prelude);
    ck_assert_int_eq(run_python(script), 0);
    char path[4200];
    tp_tensor *t = NULL;
    snprintf(path, sizeof path, "%s/be.npy", tp_test_temp_dir());
    ck_assert_int_eq(tp_npy_load(path, &t), TP_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), ".astype('<f4')"));
    snprintf(path, sizeof path, "%s/le.npy", tp_test_temp_dir());
    ck_assert_int_eq(tp_npy_load(path, &t), TP_OK);
    for (int64_t i = 0; i < 4; i++) ck_assert_double_eq(tp_tensor_get_f64(t, i), i * 1.5 - 3);
    tp_tensor_release(t);
}
END_TEST

static tp_tensor *formula_tensor(int d, int s) {
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(dtypes[d].dtype, shapes[s].ndim, shapes[s].shape, &t), TP_OK);
    unsigned char *bytes = tp_tensor_data_mut(t);
    for (int64_t i = 0; i < tp_tensor_numel(t); i++) {
        double v = expected_value(dtypes[d].dtype, i);
        switch (dtypes[d].dtype) {
        case TP_F32:
            ((float *)bytes)[i] = (float)v;
            break;
        case TP_F64:
            ((double *)bytes)[i] = v;
            break;
        case TP_I32:
            ((int32_t *)bytes)[i] = (int32_t)v;
            break;
        case TP_I64:
            ((int64_t *)bytes)[i] = (int64_t)v;
            break;
        default:
            bytes[i] = (unsigned char)v;
            break;
        }
    }
    return t;
}

static void save_every_case(const char *prefix) {
    for (int d = 0; d < NUM_DTYPES; d++)
        for (int s = 0; s < NUM_SHAPES; s++) {
            tp_tensor *t = formula_tensor(d, s);
            ck_assert_msg(tp_npy_save(case_path(prefix, d, s), t) == TP_OK, "%s", tp_last_error());
            tp_tensor_release(t);
        }
}

START_TEST(numpy_reads_files_we_save) {
    require_numpy();
    save_every_case("ours");
    char script[16384];
    snprintf(script, sizeof script, "%s", python_prelude);
    append_cases(script, sizeof script, "ours");
    size_t used = strlen(script);
    snprintf(script + used, sizeof script - used,
             "bad = 0\n"
             "for name, dtype, shape in CASES:\n"
             "    path = folder + '/' + name\n"
             "    with open(path, 'rb') as f:\n"
             "        version = np.lib.format.read_magic(f)\n"
             "    a = np.load(path)\n"
             "    want = values(dtype, shape)\n"
             "    if version != (1, 0) or a.dtype != want.dtype or a.shape != want.shape \\\n"
             "            or not np.array_equal(a, want):\n"
             "        print('mismatch in', name, version, a.dtype, a.shape, a.ravel()[:8])\n"
             "        bad = 1\n"
             "sys.exit(bad)\n");
    ck_assert_int_eq(run_python(script), 0);
}
END_TEST

START_TEST(files_we_save_are_byte_identical_to_numpy_save) {
    require_numpy();
    save_every_case("same");
    char script[16384];
    snprintf(script, sizeof script, "%s", python_prelude);
    append_cases(script, sizeof script, "same");
    size_t used = strlen(script);
    snprintf(script + used, sizeof script - used,
             "bad = 0\n"
             "for name, dtype, shape in CASES:\n"
             "    buffer = io.BytesIO()\n"
             "    np.save(buffer, values(dtype, shape))\n"
             "    with open(folder + '/' + name, 'rb') as f:\n"
             "        ours = f.read()\n"
             "    if ours != buffer.getvalue():\n"
             "        print('differs from np.save:', name, ours[:128], buffer.getvalue()[:128])\n"
             "        bad = 1\n"
             "sys.exit(bad)\n");
    ck_assert_int_eq(run_python(script), 0);
}
END_TEST

TP_TEST_SUITE(npy_numpy) {
    Suite *suite = suite_create("tensor.npy_numpy");
    TCase *tc = tcase_create("numpy");
    tcase_add_test(tc, reads_files_written_by_numpy_save);
    tcase_add_test(tc, reads_format_2_0_written_by_numpy);
    tcase_add_test(tc, reads_format_3_0_written_by_numpy);
    tcase_add_test(tc, reads_numpy_file_with_non_contiguous_source_made_contiguous);
    tcase_add_test(tc, reads_big_endian_numpy_file_only_after_the_suggested_fix);
    tcase_add_test(tc, numpy_reads_files_we_save);
    tcase_add_test(tc, files_we_save_are_byte_identical_to_numpy_save);
    suite_add_tcase(suite, tc);
    return suite;
}
