/* tp-backends: entry point, subcommand dispatch and help. */
#include <stdio.h>
#include <string.h>

#include "tp_backends.h"

static const char usage[] =
    "usage: tp-backends COMMAND [ARGS]\n"
    "\n"
    "Shows the compiler backends TensorPlay can find, why some cannot be used,\n"
    "and checks that a plugin honours the backend contract.\n"
    "\n"
    "commands:\n"
    "  list [--all] [--json]  every backend: NAME STATUS TAGS SOURCE and the reason or\n"
    "                         description; --all adds debug/experimental ones.\n"
    "                         Never loads a plugin; one whose last load failed\n"
    "                         shows 'failed (last load: REASON)' until its file\n"
    "                         changes or 'check NAME' loads it again.\n"
    "  info NAME              library, entry, contract, core range, each required\n"
    "                         library (found/missing), state and reason.\n"
    "  paths                  the INI search path in order, and where each part comes from.\n"
    "  check NAME             in a child process: load NAME, verify its tables, probe,\n"
    "                         compile and run a small graph, compare with `eager`.\n"
    "  check NAME --conformance [--json FILE] [--corpus DIR] [--filter TEXT] [--verbose]\n"
    "                         the conformance kit: every op and dtype, broadcasting,\n"
    "                         fusion patterns, dynamic shapes and error paths against\n"
    "                         `eager` with per-dtype tolerances, in child processes;\n"
    "                         a table per op; exit status 1 on any failure.\n"
    "\n"
    "environment: TP_BACKENDS_FILES (replaces the search path), TP_BACKENDS_PATH\n"
    "(prepended), XDG_CONFIG_HOME, TP_DEFAULT_BACKEND, TP_LOADER_DEBUG=1 (log every\n"
    "loader decision to stderr), TP_CONFORMANCE_DIR (the conformance corpus).\n"
    "\n"
    "exit status: 0 success, 1 failure (unknown backend, failed check), 2 usage error.\n";

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
        strcmp(command, "help") == 0) {
        fputs(usage, stdout);
        return EXIT_OK;
    }
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {{"list", command_list},
                    {"info", command_info},
                    {"paths", command_paths},
                    {"check", command_check}};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(command, commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "tp-backends: unknown command '%s'\n\n%s", command, usage);
    return EXIT_USAGE;
}
