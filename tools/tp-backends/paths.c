/* tp-backends paths: the INI search path in order, with where each part
 * comes from and what is there. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "tp_backends.h"

static int count_ini_files(const char *folder) {
    DIR *dir = opendir(folder);
    if (!dir) return -1;
    int count = 0;
    struct dirent *item;
    while ((item = readdir(dir))) {
        size_t length = strlen(item->d_name);
        if (item->d_name[0] != '.' && length > 4 && strcmp(item->d_name + length - 4, ".ini") == 0)
            count++;
    }
    closedir(dir);
    return count;
}

int command_paths(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        puts("usage: tp-backends paths");
        return EXIT_OK;
    }
    if (argc != 1) {
        fputs("usage: tp-backends paths\n", stderr);
        return EXIT_USAGE;
    }
    tp_backend_path_part *parts = NULL;
    int count = 0;
    if (tp_backend_search_path(&parts, &count) != TP_OK) {
        fprintf(stderr, "tp-backends paths: %s\n", tp_last_error());
        return EXIT_FAILED;
    }
    puts("INI search path (the first file that names a backend wins it):");
    for (int i = 0; i < count; i++) {
        char state[64];
        if (!parts[i].exists)
            snprintf(state, sizeof state, "missing");
        else if (parts[i].is_directory)
            snprintf(state, sizeof state, "folder, %d .ini file%s", count_ini_files(parts[i].path),
                     count_ini_files(parts[i].path) == 1 ? "" : "s");
        else
            snprintf(state, sizeof state, "file");
        printf("  %d. %s\n     from %s; %s\n", i + 1, parts[i].path, parts[i].origin, state);
    }
    if (count == 0) puts("  (empty)");
    tp_free(parts);
    print_problems(stdout);
    return EXIT_OK;
}
