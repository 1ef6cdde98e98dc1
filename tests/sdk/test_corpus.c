/* The conformance corpus (sdk/conformance) against the op table: every op of
 * core/ops/op_list.def has a case, every case's dtype variants build, and a
 * single-op case lists every dtype its op accepts. A new op or a widened
 * dtype rule without conformance coverage fails here. */
#include <stdio.h>
#include <string.h>

#include "conformance.h"
#include "ops/op_table.h"
#include "tp_test.h"

static conformance_corpus corpus;

static void load_corpus(void) {
    char dir[4096], error[4096];
    snprintf(dir, sizeof dir, "%s/sdk/conformance", tp_test_source_dir());
    if (conformance_corpus_load(dir, &corpus, error, sizeof error) != TP_OK)
        ck_abort_msg("cannot load the corpus: %s", error);
}

static void free_corpus(void) {
    conformance_corpus_free(&corpus);
}

/* Whether some file of the corpus uses `op` and has it as its group. */
static bool op_has_own_case(const char *op) {
    for (int f = 0; f < corpus.num_files; f++) {
        const conformance_file *file = &corpus.files[f];
        if (strcmp(file->group, op) != 0) continue;
        for (int v = 0; v < tp_graph_num_values(file->graph); v++) {
            const char *used = tp_graph_value_op(file->graph, v);
            if (used && strcmp(used, op) == 0) return true;
        }
    }
    return false;
}

START_TEST(every_op_of_the_op_table_has_a_case) {
    char missing[4096] = "";
    for (int id = 0; id < TP_OP_COUNT; id++) {
        const char *name = tp_op_get((tp_op_id)id)->name;
        if (!op_has_own_case(name))
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " %s", name);
    }
    ck_assert_msg(missing[0] == '\0',
                  "ops without a conformance case (add one to sdk/conformance/gen_corpus.py):%s",
                  missing);
}
END_TEST

START_TEST(every_listed_dtype_variant_builds) {
    for (int f = 0; f < corpus.num_files; f++) {
        const conformance_file *file = &corpus.files[f];
        for (int d = 0; d < file->num_dtypes; d++) {
            tp_graph *graph = NULL;
            bool changed;
            tp_status status = conformance_retype(file, file->dtypes[d], &graph, &changed);
            ck_assert_msg(status == TP_OK, "%s: the %s variant does not build: %s", file->path,
                          tp_dtype_name(file->dtypes[d]), tp_last_error());
            tp_graph_destroy(graph);
        }
    }
}
END_TEST

static bool lists_dtype(const conformance_file *file, tp_dtype dtype) {
    for (int d = 0; d < file->num_dtypes; d++)
        if (file->dtypes[d] == dtype) return true;
    return false;
}

/* Whether every node of the file's graph is its group's op. */
static bool only_op(const conformance_file *file) {
    if (!tp_op_find(file->group)) return false;
    for (int v = 0; v < tp_graph_num_values(file->graph); v++) {
        const char *op = tp_graph_value_op(file->graph, v);
        if (op && strcmp(op, file->group) != 0) return false;
    }
    return true;
}

START_TEST(single_op_cases_cover_every_dtype_their_op_accepts) {
    for (int f = 0; f < corpus.num_files; f++) {
        const conformance_file *file = &corpus.files[f];
        if (!only_op(file)) continue; /* several ops: dtype rules of each differ */
        for (int dtype = 0; dtype < TP_DTYPE_COUNT; dtype++) {
            if (lists_dtype(file, (tp_dtype)dtype)) continue;
            tp_graph *graph = NULL;
            bool changed = false;
            tp_status status = conformance_retype(file, (tp_dtype)dtype, &graph, &changed);
            tp_graph_destroy(graph);
            ck_assert_msg(status != TP_OK || !changed,
                          "%s: op '%s' accepts %s inputs but the case does not list it in "
                          "@dtypes",
                          file->path, file->group, tp_dtype_name((tp_dtype)dtype));
        }
    }
}
END_TEST

START_TEST(every_symbolic_case_binds_its_symbols) {
    for (int c = 0; c < corpus.num_cases; c++) {
        const conformance_case *item = &corpus.cases[c];
        tp_graph *graph = NULL;
        bool changed;
        ck_assert_int_eq(conformance_retype(item->file, item->dtype, &graph, &changed), TP_OK);
        tp_tensor *inputs[64] = {NULL};
        ck_assert_msg(conformance_make_inputs(item, graph, inputs) == TP_OK,
                      "%s: an input dimension is a symbol that no @bind sets", item->name);
        for (int i = 0; i < tp_graph_num_inputs(graph); i++) tp_tensor_release(inputs[i]);
        tp_graph_destroy(graph);
    }
}
END_TEST

START_TEST(the_corpus_has_every_kind_of_case) {
    const char *groups[] = {"broadcast", "fusion", "dynamic", "edge", "errors"};
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        bool found = false;
        for (int f = 0; f < corpus.num_files && !found; f++)
            found = strcmp(corpus.files[f].group, groups[g]) == 0;
        ck_assert_msg(found, "no case of group '%s'", groups[g]);
    }
}
END_TEST

START_TEST(a_malformed_directive_names_the_file_and_line) {
    char dir[4096], path[4200], error[4096];
    snprintf(dir, sizeof dir, "%s", tp_test_temp_dir());
    snprintf(path, sizeof path, "%s/bad.tpir", dir);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs("# a case\n# @dtypes f32 f24\ngraph g(%x: f32[2]) {\n  %y: f32[2] = exp(%x)\n"
          "  return %y\n}\n",
          file);
    fclose(file);
    conformance_corpus bad;
    ck_assert_int_ne(conformance_corpus_load(dir, &bad, error, sizeof error), TP_OK);
    ck_assert_msg(strstr(error, "bad.tpir:2:") != NULL, "error was: %s", error);
}
END_TEST

TP_TEST_SUITE(corpus) {
    Suite *suite = suite_create("conformance corpus");
    TCase *tc = tcase_create("coverage");
    tcase_add_unchecked_fixture(tc, load_corpus, free_corpus);
    tcase_add_test(tc, every_op_of_the_op_table_has_a_case);
    tcase_add_test(tc, every_listed_dtype_variant_builds);
    tcase_add_test(tc, single_op_cases_cover_every_dtype_their_op_accepts);
    tcase_add_test(tc, every_symbolic_case_binds_its_symbols);
    tcase_add_test(tc, the_corpus_has_every_kind_of_case);
    tcase_add_test(tc, a_malformed_directive_names_the_file_and_line);
    suite_add_tcase(suite, tc);
    return suite;
}
