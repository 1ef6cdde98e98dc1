/* `tpc dot`: the DOT text for a graph split between fixture speaks_1_2
 * (claims only add and mul) and eager, checked for its structure against
 * the partition derived by hand, and parsed by Graphviz's dot (skipped with
 * a message where dot is not installed).
 *
 *   %a = add(%x, %y)   speaks_1_2   region 0
 *   %e = exp(%a)       eager        region 1   (%a crosses 0 -> 1)
 *   %m = mul(%e, %y)   speaks_1_2   region 2   (%e crosses 1 -> 2)
 */
#include <sys/wait.h>

#include "registry_test.h"

static const char split_graph[] = "graph split(%x: f32[4], %y: f32[4]) {\n"
                                  "  %a: f32[4] = add(%x, %y)\n"
                                  "  %e: f32[4] = exp(%a)\n"
                                  "  %m: f32[4] = mul(%e, %y)\n"
                                  "  return %m\n"
                                  "}\n";

static char dot_text[65536];

/* Runs `tpc dot` on the split graph with `extra` options into TEMP/NAME;
 * returns tpc's exit status and keeps the DOT text in dot_text. */
static int run_dot(const char *extra, const char *name, char *dot_path, size_t size) {
    const char *graph = write_temp_file("split.tpir", split_graph);
    snprintf(dot_path, size, "%s/%s", tp_test_temp_dir(), name);
    char command[16384];
    snprintf(command, sizeof command,
             "TP_BACKENDS_FILES='%s' '%s' dot --backend speaks_1_2 --fallback eager %s -o '%s' "
             "'%s' 2>&1",
             fixture("speaks_1_2.ini"), TP_TPC_TOOL, extra, dot_path, graph);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    char out[4096];
    size_t used = fread(out, 1, sizeof out - 1, pipe);
    out[used] = '\0';
    int status = pclose(pipe);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "tpc dot failed: %s", out);
    FILE *file = fopen(dot_path, "r");
    ck_assert_msg(file != NULL, "tpc dot wrote no %s", dot_path);
    used = fread(dot_text, 1, sizeof dot_text - 1, file);
    dot_text[used] = '\0';
    fclose(file);
    return WEXITSTATUS(status);
}

/* Lines of dot_text containing every one of `needle` and `also` (NULL: any). */
static int count_lines(const char *needle, const char *also) {
    int count = 0;
    for (const char *line = dot_text; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        char copy[4096];
        snprintf(copy, sizeof copy, "%.*s", (int)(length < 4095 ? length : 4095), line);
        if (strstr(copy, needle) && (!also || strstr(copy, also))) count++;
        line += length + (end ? 1 : 0);
    }
    return count;
}

/* The line of cluster `r` must carry the fill colour `color`. */
static void assert_cluster_color(int r, const char *color) {
    char header[64], fill[64];
    snprintf(header, sizeof header, "subgraph cluster_r%d ", r);
    const char *at = strstr(dot_text, header);
    ck_assert_msg(at != NULL, "no cluster %d in:\n%s", r, dot_text);
    snprintf(fill, sizeof fill, "fillcolor=\"%s\"", color);
    const char *found = strstr(at, fill), *next = strstr(at, "  }\n");
    ck_assert_msg(found && next && found < next, "cluster %d is not filled %s:\n%s", r, color,
                  dot_text);
}

START_TEST(partition_regions_are_clusters_coloured_by_backend_with_crossings_marked) {
    char path[4200];
    run_dot("", "split.dot", path, sizeof path);
    ck_assert_int_eq(count_lines("subgraph cluster_", NULL), 3);
    ck_assert_int_eq(count_lines("region 0: speaks_1_2 (1 node)", NULL), 1);
    ck_assert_int_eq(count_lines("region 1: eager (1 node)", NULL), 1);
    ck_assert_int_eq(count_lines("region 2: speaks_1_2 (1 node)", NULL), 1);
    /* one backend, one colour: regions 0 and 2 alike, region 1 different */
    assert_cluster_color(0, "#aec7e8");
    assert_cluster_color(1, "#ffbb78");
    assert_cluster_color(2, "#aec7e8");
    ck_assert_int_eq(count_lines("[label=\"%", NULL), 5); /* 2 inputs + 3 nodes */
    ck_assert_int_eq(count_lines("%a = add\\nf32[4]", NULL), 1);
    ck_assert_int_eq(count_lines(" -> ", NULL), 5); /* one per operand */
    ck_assert_int_eq(count_lines(" -> ", "#d62728"), 2);
    ck_assert_int_eq(count_lines("v2 -> v3 ", "#d62728"), 1); /* %a into exp */
    ck_assert_int_eq(count_lines("v3 -> v4 ", "#d62728"), 1); /* %e into mul */
    ck_assert_int_eq(count_lines("peripheries=2", NULL), 1);  /* the one output */
}
END_TEST

START_TEST(a_graph_above_max_nodes_collapses_to_one_box_per_region) {
    char path[4200];
    run_dot("--max-nodes 2", "collapsed.dot", path, sizeof path);
    ck_assert_int_eq(count_lines("subgraph cluster_", NULL), 3);
    ck_assert_int_eq(count_lines("\\n1 node\"]", NULL), 3);
    /* x -> r0, y -> r0, y -> r2, and one crossing tensor r0 -> r1, r1 -> r2 */
    ck_assert_int_eq(count_lines(" -> ", NULL), 5);
    ck_assert_int_eq(count_lines("r0 -> r1 ", "1 tensor\""), 1);
    ck_assert_int_eq(count_lines("r1 -> r2 ", "1 tensor\""), 1);
}
END_TEST

static bool graphviz_installed(void) {
    return system("command -v dot >/dev/null 2>&1") == 0;
}

/* Graphviz parses the file and, in its plain output, counts the same
 * nodes and edges. */
START_TEST(graphviz_parses_the_output_and_finds_its_nodes_and_edges) {
    if (!graphviz_installed()) {
        fprintf(stderr, "skipped: Graphviz's dot is not on PATH (apt-get install graphviz)\n");
        return;
    }
    char path[4200], command[8800];
    run_dot("", "parsed.dot", path, sizeof path);
    snprintf(command, sizeof command, "dot -Tplain '%s' 2>&1", path);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    int nodes = 0, edges = 0;
    char line[4096], all[16384] = "";
    while (fgets(line, sizeof line, pipe)) {
        nodes += strncmp(line, "node ", 5) == 0;
        edges += strncmp(line, "edge ", 5) == 0;
        strncat(all, line, sizeof all - strlen(all) - 1);
    }
    int status = pclose(pipe);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "dot failed:\n%s", all);
    ck_assert_int_eq(nodes, 5);
    ck_assert_int_eq(edges, 5);
}
END_TEST

START_TEST(png_is_rendered_through_graphviz) {
    if (!graphviz_installed()) {
        fprintf(stderr, "skipped: Graphviz's dot is not on PATH (apt-get install graphviz)\n");
        return;
    }
    char path[4200], png[4300], extra[4400];
    snprintf(png, sizeof png, "%s/split.png", tp_test_temp_dir());
    snprintf(extra, sizeof extra, "--png '%s'", png);
    run_dot(extra, "png.dot", path, sizeof path);
    FILE *file = fopen(png, "rb");
    ck_assert_msg(file != NULL, "no %s", png);
    unsigned char magic[8] = {0};
    ck_assert_int_eq(fread(magic, 1, 8, file), 8);
    fclose(file);
    ck_assert_int_eq(memcmp(magic, "\x89PNG\r\n\x1a\n", 8), 0);
}
END_TEST

TP_TEST_SUITE(tpc_dot) {
    Suite *suite = suite_create("registry.tpc_dot");
    TCase *dot = tcase_create("dot");
    tcase_add_test(dot, partition_regions_are_clusters_coloured_by_backend_with_crossings_marked);
    tcase_add_test(dot, a_graph_above_max_nodes_collapses_to_one_box_per_region);
    tcase_add_test(dot, graphviz_parses_the_output_and_finds_its_nodes_and_edges);
    tcase_add_test(dot, png_is_rendered_through_graphviz);
    suite_add_tcase(suite, dot);
    return suite;
}
