/* .npy reading and writing without NumPy: headers built byte by byte in each
 * test, every malformed case the reader must reject, and save/load round
 * trips. (NumPy interop is in test_npy_numpy.c.) */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy_bytes.h"
#include "tensor/tensor_internal.h"
#include "tp_test.h"

static unsigned char image[4096];

/* Loads `size` bytes of `image` as "bad.npy" and expects `status`, no tensor,
 * and a message naming the file and containing `fragment`. */
static void expect_rejected(size_t size, tp_status status, const char *fragment) {
    tp_tensor *t = (tp_tensor *)&t; /* must be reset to NULL */
    tp_status got = tp_npy_load_buffer(image, size, "bad.npy", &t);
    ck_assert_msg(got == status, "status %s, expected %s; message: %s", tp_status_name(got),
                  tp_status_name(status), tp_last_error());
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(tp_last_error(), "bad.npy") != NULL, "no file name in: %s",
                  tp_last_error());
    ck_assert_msg(strstr(tp_last_error(), fragment) != NULL, "'%s' not in: %s", fragment,
                  tp_last_error());
}

static size_t build(int major, const char *header, const void *data, size_t data_size) {
    return npy_bytes_build(image, sizeof image, major, header, data, data_size);
}

static tp_tensor *load_ok(size_t size) {
    tp_tensor *t = NULL;
    tp_status status = tp_npy_load_buffer(image, size, "good.npy", &t);
    ck_assert_msg(status == TP_OK, "%s", tp_last_error());
    return t;
}

static const float six_floats[6] = {0, 1, 2, 3, 4, 5};

/* ---- headers the reader accepts ------------------------------------------- */

START_TEST(reads_plain_version_1_header) {
    size_t size = build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n",
                        six_floats, sizeof six_floats);
    tp_tensor *t = load_ok(size);
    ck_assert_int_eq(tp_tensor_dtype(t), TP_F32);
    ck_assert_int_eq(tp_tensor_ndim(t), 2);
    ck_assert_int_eq(tp_tensor_dim(t, 0), 2);
    ck_assert_int_eq(tp_tensor_dim(t, 1), 3);
    ck_assert_mem_eq(tp_tensor_data(t), six_floats, sizeof six_floats);
    ck_assert_uint_eq((uintptr_t)tp_tensor_data(t) % TP_TENSOR_ALIGNMENT, 0);
    tp_tensor_release(t);
}
END_TEST

START_TEST(reads_keys_in_any_order_with_odd_spacing) {
    size_t size = build(1, "{ \"shape\" :(2,3) ,'fortran_order':False,\t'descr':'<f4'}   \n",
                        six_floats, sizeof six_floats);
    tp_tensor *t = load_ok(size);
    ck_assert_int_eq(tp_tensor_numel(t), 6);
    tp_tensor_release(t);
}
END_TEST

START_TEST(reads_one_tuple_and_python2_long_dims) {
    size_t size = build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", six_floats,
                        sizeof six_floats);
    tp_tensor *t = load_ok(size);
    ck_assert_int_eq(tp_tensor_ndim(t), 1);
    ck_assert_int_eq(tp_tensor_dim(t, 0), 6);
    tp_tensor_release(t);
    size = build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 2L)}", six_floats,
                 sizeof six_floats);
    t = load_ok(size);
    ck_assert_int_eq(tp_tensor_dim(t, 0), 3);
    tp_tensor_release(t);
}
END_TEST

START_TEST(reads_zero_d_scalar) {
    double value = -2.5;
    size_t size =
        build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n", &value, sizeof value);
    tp_tensor *t = load_ok(size);
    ck_assert_int_eq(tp_tensor_ndim(t), 0);
    ck_assert_int_eq(tp_tensor_numel(t), 1);
    ck_assert_double_eq(tp_tensor_get_f64(t, 0), -2.5);
    tp_tensor_release(t);
}
END_TEST

START_TEST(reads_size_zero_array_without_data) {
    size_t size =
        build(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (4, 0), }\n", NULL, 0);
    tp_tensor *t = load_ok(size);
    ck_assert_int_eq(tp_tensor_numel(t), 0);
    ck_assert_int_eq(tp_tensor_dim(t, 0), 4);
    tp_tensor_release(t);
}
END_TEST

START_TEST(reads_native_byte_order_as_little_endian) {
    int32_t values[2] = {7, -9};
    size_t size =
        build(1, "{'descr': '=i4', 'fortran_order': False, 'shape': (2,)}", values, sizeof values);
    tp_tensor *t = load_ok(size);
    ck_assert_int_eq(tp_tensor_dtype(t), TP_I32);
    ck_assert_double_eq(tp_tensor_get_f64(t, 1), -9);
    tp_tensor_release(t);
}
END_TEST

START_TEST(reads_version_2_and_3_headers) {
    for (int major = 2; major <= 3; major++) {
        size_t size = build(major, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }\n",
                            six_floats, sizeof six_floats);
        tp_tensor *t = load_ok(size);
        ck_assert_int_eq(tp_tensor_dim(t, 0), 3);
        ck_assert_mem_eq(tp_tensor_data(t), six_floats, sizeof six_floats);
        tp_tensor_release(t);
    }
}
END_TEST

START_TEST(reads_bool_zero_and_one) {
    uint8_t values[3] = {1, 0, 1};
    size_t size = build(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", values,
                        sizeof values);
    tp_tensor *t = load_ok(size);
    ck_assert_int_eq(tp_tensor_dtype(t), TP_BOOL);
    ck_assert_mem_eq(tp_tensor_data(t), values, 3);
    tp_tensor_release(t);
}
END_TEST

/* ---- malformed files -------------------------------------------------------- */

START_TEST(rejects_bad_magic) {
    size_t size = build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                        six_floats, sizeof six_floats);
    image[1] = 'n';
    expect_rejected(size, TP_ERR_PARSE, "bad magic");
    memcpy(image, "PK\x03\x04", 4); /* a .npz (zip) */
    expect_rejected(size, TP_ERR_PARSE, "bad magic");
}
END_TEST

START_TEST(rejects_empty_and_truncated_preamble) {
    build(1, "{}", NULL, 0);
    expect_rejected(0, TP_ERR_PARSE, "truncated header");
    expect_rejected(4, TP_ERR_PARSE, "truncated header");
    expect_rejected(9, TP_ERR_PARSE, "truncated header");
    build(2, "{}", NULL, 0);
    expect_rejected(11, TP_ERR_PARSE, "truncated header");
}
END_TEST

START_TEST(rejects_unsupported_versions) {
    size_t size =
        build(4, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", six_floats, 4);
    expect_rejected(size, TP_ERR_UNSUPPORTED, "version 4.0");
    size = build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", six_floats, 4);
    image[7] = 1;
    expect_rejected(size, TP_ERR_UNSUPPORTED, "version 1.1");
    image[6] = 0;
    image[7] = 0;
    expect_rejected(size, TP_ERR_UNSUPPORTED, "version 0.0");
}
END_TEST

START_TEST(rejects_header_length_beyond_file) {
    size_t size = build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", NULL, 0);
    image[8] = 0xff; /* header length 0x..ff, longer than the image */
    image[9] = 0x01;
    expect_rejected(size, TP_ERR_PARSE, "header length 511 goes beyond the end of the file");
    size = build(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", NULL, 0);
    image[11] = 0xff; /* 4 GiB header */
    expect_rejected(size, TP_ERR_PARSE, "beyond the end of the file");
}
END_TEST

START_TEST(rejects_missing_keys) {
    size_t size = build(1, "{'fortran_order': False, 'shape': (6,), }", six_floats, 24);
    expect_rejected(size, TP_ERR_PARSE, "missing key 'descr'");
    size = build(1, "{'descr': '<f4', 'shape': (6,), }", six_floats, 24);
    expect_rejected(size, TP_ERR_PARSE, "missing key 'fortran_order'");
    size = build(1, "{'descr': '<f4', 'fortran_order': False}", six_floats, 24);
    expect_rejected(size, TP_ERR_PARSE, "missing key 'shape'");
}
END_TEST

START_TEST(rejects_fortran_order) {
    size_t size = build(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", six_floats,
                        sizeof six_floats);
    expect_rejected(size, TP_ERR_UNSUPPORTED,
                    "bad.npy is Fortran-ordered; save it with numpy.ascontiguousarray");
    expect_rejected(size, TP_ERR_UNSUPPORTED, "'fortran_order'");
}
END_TEST

START_TEST(rejects_big_endian_with_the_fix) {
    size_t size = build(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
                        six_floats, sizeof six_floats);
    expect_rejected(size, TP_ERR_UNSUPPORTED,
                    "'descr' '>f4' is big-endian; convert with .astype('<f4')");
    size = build(1, "{'descr': '>i8', 'fortran_order': False, 'shape': (3,), }", six_floats, 24);
    expect_rejected(size, TP_ERR_UNSUPPORTED, ".astype('<i8')");
}
END_TEST

START_TEST(rejects_unsupported_dtypes) {
    const char *headers[] = {
        "{'descr': '<u2', 'fortran_order': False, 'shape': (12,), }",
        "{'descr': '<i2', 'fortran_order': False, 'shape': (12,), }",
        "{'descr': '|u1', 'fortran_order': False, 'shape': (24,), }",
        "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }",
        "{'descr': '|f4', 'fortran_order': False, 'shape': (6,), }",
        "{'descr': '', 'fortran_order': False, 'shape': (6,), }",
    };
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        size_t size = build(1, headers[i], six_floats, 24);
        expect_rejected(size, TP_ERR_UNSUPPORTED, "is not supported");
        expect_rejected(size, TP_ERR_UNSUPPORTED, "'descr'");
    }
    size_t size = build(1, "{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (6,), }",
                        six_floats, 24);
    expect_rejected(size, TP_ERR_UNSUPPORTED, "structured");
}
END_TEST

START_TEST(rejects_more_than_eight_dims) {
    size_t size =
        build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }",
              six_floats, 4);
    expect_rejected(size, TP_ERR_UNSUPPORTED, "'shape' has 9 dimensions");
}
END_TEST

START_TEST(rejects_negative_dims) {
    size_t size = build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", NULL, 0);
    expect_rejected(size, TP_ERR_PARSE, "'shape' dimension 1 is negative (-3)");
}
END_TEST

START_TEST(rejects_overflowing_dims) {
    size_t size = build(
        1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", NULL, 0);
    expect_rejected(size, TP_ERR_PARSE, "'shape' dimension 0 does not fit");
    size = build(
        1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }",
        NULL, 0);
    expect_rejected(size, TP_ERR_PARSE, "'shape'");
    expect_rejected(size, TP_ERR_PARSE, "[1099511627776, 1099511627776]");
}
END_TEST

START_TEST(rejects_short_data) {
    size_t size =
        build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", six_floats, 20);
    expect_rejected(size, TP_ERR_PARSE, "data is truncated");
    expect_rejected(size, TP_ERR_PARSE, "needs 24 bytes");
    /* A huge shape with no data must fail before allocating anything. */
    size =
        build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", NULL, 0);
    expect_rejected(size, TP_ERR_PARSE, "data is truncated");
}
END_TEST

START_TEST(rejects_extra_data) {
    size_t size = build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", six_floats,
                        sizeof six_floats);
    expect_rejected(size, TP_ERR_PARSE, "4 unexpected bytes after the data");
}
END_TEST

START_TEST(rejects_bool_bytes_other_than_0_and_1_naming_the_offset) {
    uint8_t values[4] = {1, 0, 2, 1};
    const char *header = "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }";
    size_t size = build(1, header, values, sizeof values);
    char expected[64];
    snprintf(expected, sizeof expected, "byte offset %zu is 2", 10 + strlen(header) + 2);
    expect_rejected(size, TP_ERR_PARSE, expected);
}
END_TEST

START_TEST(rejects_malformed_dict_syntax) {
    static const struct {
        const char *header;
        const char *fragment;
    } cases[] = {
        {"", "expected '{'"},
        {"[]", "expected '{'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", "unexpected key 'x'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}",
         "appears twice"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (6,)}", "expected ',' or '}'"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': (6,)}", "expected ':'"},
        {"{'descr': '<f4", "a closing quote"},
        {"{'descr': '<f4', 'fortran_order': false, 'shape': (6,)}", "True or False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6)}", "1-tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [6]}", "'(' to open 'shape'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,,)}", "an integer in 'shape'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} x", "only padding"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,", "found the end of the header"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,)", "found the end of the header"},
        {"{'descr': 'a\\b', 'fortran_order': False, 'shape': (6,)}", "unsupported character"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "',' or ')'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t size = build(1, cases[i].header, six_floats, 24);
        expect_rejected(size, TP_ERR_PARSE, cases[i].fragment);
    }
}
END_TEST

START_TEST(rejects_null_arguments) {
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_npy_load_buffer(NULL, 10, "x.npy", &t), TP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(tp_npy_load_buffer(image, 10, "x.npy", NULL), TP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(tp_npy_load(NULL, &t), TP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(tp_npy_save(NULL, NULL), TP_ERR_INVALID_ARGUMENT);
    /* A buffer without a name is called <buffer> in messages. */
    ck_assert_int_eq(tp_npy_load_buffer(image, 0, NULL, &t), TP_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "<buffer>"));
}
END_TEST

/* ---- files ------------------------------------------------------------------ */

static char *temp_path(const char *name) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", tp_test_temp_dir(), name);
    return path;
}

static tp_tensor *counting_tensor(tp_dtype dtype, int ndim, const int64_t *shape) {
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, ndim, shape, &t), TP_OK);
    unsigned char *bytes = tp_tensor_data_mut(t);
    /* Distinct valid values: element i is i (bools alternate). */
    for (int64_t i = 0; i < tp_tensor_numel(t); i++) {
        switch (dtype) {
        case TP_F32:
            ((float *)bytes)[i] = (float)i + 0.25f;
            break;
        case TP_F64:
            ((double *)bytes)[i] = (double)i - 0.5;
            break;
        case TP_I32:
            ((int32_t *)bytes)[i] = (int32_t)(i * 3 - 7);
            break;
        case TP_I64:
            ((int64_t *)bytes)[i] = (i << 33) - 5;
            break;
        default:
            bytes[i] = (unsigned char)(i % 3 == 1);
            break;
        }
    }
    return t;
}

static void expect_round_trip(tp_dtype dtype, int ndim, const int64_t *shape) {
    tp_tensor *t = counting_tensor(dtype, ndim, shape), *back = NULL;
    const char *path = temp_path("round.npy");
    ck_assert_msg(tp_npy_save(path, t) == TP_OK, "%s", tp_last_error());
    ck_assert_msg(tp_npy_load(path, &back) == TP_OK, "%s", tp_last_error());
    char a[128], b[128];
    ck_assert_str_eq(tp_tensor_describe(back, b, sizeof b), tp_tensor_describe(t, a, sizeof a));
    ck_assert_int_eq(tp_tensor_nbytes(back), tp_tensor_nbytes(t));
    if (tp_tensor_nbytes(t))
        ck_assert_mem_eq(tp_tensor_data(back), tp_tensor_data(t), tp_tensor_nbytes(t));
    tp_tensor_release(t);
    tp_tensor_release(back);
}

START_TEST(round_trips_every_dtype_in_every_shape_kind) {
    int64_t matrix[] = {3, 5}, empty[] = {2, 0, 3}, eight[] = {2, 1, 2, 3, 1, 2, 1, 2};
    for (int d = 0; d < TP_DTYPE_COUNT; d++) {
        expect_round_trip((tp_dtype)d, 0, NULL);
        expect_round_trip((tp_dtype)d, 2, matrix);
        expect_round_trip((tp_dtype)d, 3, empty);
        expect_round_trip((tp_dtype)d, 8, eight);
    }
}
END_TEST

static size_t read_file(const char *path, unsigned char *out, size_t capacity) {
    FILE *file = fopen(path, "rb");
    ck_assert_ptr_nonnull(file);
    size_t size = fread(out, 1, capacity, file);
    fclose(file);
    return size;
}

START_TEST(saved_file_is_version_1_with_data_at_a_multiple_of_64) {
    int64_t shape[] = {1, 2, 3, 1, 2, 1, 1, 2};
    for (int ndim = 0; ndim <= 8; ndim++) {
        tp_tensor *t = counting_tensor(TP_I32, ndim, shape);
        const char *path = temp_path("aligned.npy");
        ck_assert_int_eq(tp_npy_save(path, t), TP_OK);
        size_t size = read_file(path, image, sizeof image);
        ck_assert_mem_eq(image, "\x93NUMPY\x01\x00", 8);
        size_t data_offset = 10 + (size_t)(image[8] | image[9] << 8);
        ck_assert_uint_eq(data_offset % 64, 0);
        ck_assert_uint_eq(size, data_offset + tp_tensor_nbytes(t));
        ck_assert_uint_eq(image[data_offset - 1], '\n');
        tp_tensor_release(t);
    }
}
END_TEST

START_TEST(save_leaves_no_temporary_file) {
    int64_t n = 4;
    tp_tensor *t = counting_tensor(TP_F32, 1, &n);
    ck_assert_int_eq(mkdir(temp_path("alone"), 0700), 0);
    ck_assert_int_eq(tp_npy_save(temp_path("alone/only.npy"), t), TP_OK);
    ck_assert_int_eq(tp_npy_save(temp_path("alone/only.npy"), t), TP_OK); /* overwrite */
    tp_tensor_release(t);
    DIR *dir = opendir(temp_path("alone"));
    ck_assert_ptr_nonnull(dir);
    int entries = 0, others = 0;
    for (struct dirent *entry; (entry = readdir(dir));) {
        if (entry->d_name[0] == '.') continue;
        entries++;
        others += strcmp(entry->d_name, "only.npy") != 0;
    }
    closedir(dir);
    ck_assert_int_eq(entries, 1);
    ck_assert_int_eq(others, 0);
}
END_TEST

START_TEST(save_into_missing_folder_reports_errno_and_cleans_up) {
    int64_t n = 4;
    tp_tensor *t = counting_tensor(TP_F32, 1, &n);
    ck_assert_int_eq(tp_npy_save(temp_path("missing/x.npy"), t), TP_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "missing/x.npy"));
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "No such file or directory"));
    tp_tensor_release(t);
}
END_TEST

START_TEST(save_onto_a_folder_fails_and_removes_the_temporary_file) {
    int64_t n = 4;
    tp_tensor *t = counting_tensor(TP_F32, 1, &n);
    ck_assert_int_eq(mkdir(temp_path("folder.npy"), 0700), 0);
    ck_assert_int_eq(tp_npy_save(temp_path("folder.npy"), t), TP_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "folder.npy"));
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "renaming"));
    struct stat info;
    char temp[4200];
    snprintf(temp, sizeof temp, "%s.tmp.%ld", temp_path("folder.npy"), (long)getpid());
    ck_assert_int_ne(stat(temp, &info), 0);
    tp_tensor_release(t);
}
END_TEST

START_TEST(load_of_missing_file_is_not_found) {
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_npy_load(temp_path("absent.npy"), &t), TP_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "absent.npy"));
    ck_assert_ptr_null(t);
}
END_TEST

START_TEST(load_of_folder_is_an_io_error) {
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_npy_load(tp_test_temp_dir(), &t), TP_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "not a regular file"));
}
END_TEST

static void write_image(const char *path, size_t size) {
    FILE *file = fopen(path, "wb");
    ck_assert_ptr_nonnull(file);
    ck_assert_uint_eq(fwrite(image, 1, size, file), size);
    fclose(file);
}

START_TEST(load_from_file_rejects_what_the_buffer_reader_rejects) {
    const char *path = temp_path("bad-file.npy");
    tp_tensor *t = NULL;
    size_t size =
        build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", six_floats, 20);
    write_image(path, size);
    ck_assert_int_eq(tp_npy_load(path, &t), TP_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "bad-file.npy: data is truncated"));
    write_image(path, 5);
    ck_assert_int_eq(tp_npy_load(path, &t), TP_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "truncated header"));
    size = build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", NULL, 0);
    image[9] = 0x7f;
    write_image(path, size);
    ck_assert_int_eq(tp_npy_load(path, &t), TP_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "beyond the end of the file"));
    uint8_t values[2] = {0, 7};
    size = build(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", values, 2);
    write_image(path, size);
    ck_assert_int_eq(tp_npy_load(path, &t), TP_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "is 7"));
    ck_assert_ptr_null(t);
}
END_TEST

/* A version-1 header of length 0 or 1 ends inside the 12 bytes the file
 * reader reads first; the bytes after it (chosen by the file's author) must
 * not be copied past the header buffer. */
START_TEST(load_from_file_rejects_header_length_0_and_1_without_overflow) {
    const char *path = temp_path("short-header.npy");
    for (unsigned header_length = 0; header_length <= 1; header_length++) {
        memset(image, 'A', sizeof image);
        memcpy(image, "\x93NUMPY\x01\x00", 8);
        image[8] = (unsigned char)header_length;
        image[9] = 0;
        write_image(path, sizeof image);
        tp_tensor *t = (tp_tensor *)&t;
        ck_assert_int_eq(tp_npy_load(path, &t), TP_ERR_PARSE);
        ck_assert_ptr_null(t);
        ck_assert_msg(strstr(tp_last_error(), "short-header.npy: header") != NULL, "%s",
                      tp_last_error());
    }
}
END_TEST

START_TEST(load_from_file_reads_version_2) {
    const char *path = temp_path("v2.npy");
    size_t size = build(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", six_floats,
                        sizeof six_floats);
    write_image(path, size);
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_npy_load(path, &t), TP_OK);
    ck_assert_mem_eq(tp_tensor_data(t), six_floats, sizeof six_floats);
    tp_tensor_release(t);
}
END_TEST

TP_TEST_SUITE(npy) {
    Suite *suite = suite_create("tensor.npy");
    TCase *accept = tcase_create("accept");
    tcase_add_test(accept, reads_plain_version_1_header);
    tcase_add_test(accept, reads_keys_in_any_order_with_odd_spacing);
    tcase_add_test(accept, reads_one_tuple_and_python2_long_dims);
    tcase_add_test(accept, reads_zero_d_scalar);
    tcase_add_test(accept, reads_size_zero_array_without_data);
    tcase_add_test(accept, reads_native_byte_order_as_little_endian);
    tcase_add_test(accept, reads_version_2_and_3_headers);
    tcase_add_test(accept, reads_bool_zero_and_one);
    suite_add_tcase(suite, accept);
    TCase *reject = tcase_create("reject");
    tcase_add_test(reject, rejects_bad_magic);
    tcase_add_test(reject, rejects_empty_and_truncated_preamble);
    tcase_add_test(reject, rejects_unsupported_versions);
    tcase_add_test(reject, rejects_header_length_beyond_file);
    tcase_add_test(reject, rejects_missing_keys);
    tcase_add_test(reject, rejects_fortran_order);
    tcase_add_test(reject, rejects_big_endian_with_the_fix);
    tcase_add_test(reject, rejects_unsupported_dtypes);
    tcase_add_test(reject, rejects_more_than_eight_dims);
    tcase_add_test(reject, rejects_negative_dims);
    tcase_add_test(reject, rejects_overflowing_dims);
    tcase_add_test(reject, rejects_short_data);
    tcase_add_test(reject, rejects_extra_data);
    tcase_add_test(reject, rejects_bool_bytes_other_than_0_and_1_naming_the_offset);
    tcase_add_test(reject, rejects_malformed_dict_syntax);
    tcase_add_test(reject, rejects_null_arguments);
    suite_add_tcase(suite, reject);
    TCase *files = tcase_create("files");
    tcase_add_test(files, round_trips_every_dtype_in_every_shape_kind);
    tcase_add_test(files, saved_file_is_version_1_with_data_at_a_multiple_of_64);
    tcase_add_test(files, save_leaves_no_temporary_file);
    tcase_add_test(files, save_into_missing_folder_reports_errno_and_cleans_up);
    tcase_add_test(files, save_onto_a_folder_fails_and_removes_the_temporary_file);
    tcase_add_test(files, load_of_missing_file_is_not_found);
    tcase_add_test(files, load_of_folder_is_an_io_error);
    tcase_add_test(files, load_from_file_rejects_what_the_buffer_reader_rejects);
    tcase_add_test(files, load_from_file_rejects_header_length_0_and_1_without_overflow);
    tcase_add_test(files, load_from_file_reads_version_2);
    suite_add_tcase(suite, files);
    return suite;
}
