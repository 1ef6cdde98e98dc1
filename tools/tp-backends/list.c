/* tp-backends list: every backend with its status and why, as a table or
 * JSON, and which backend `auto` picks now and why. Never loads a plugin in
 * this process (auto is resolved in a child: auto_pick.c); a plugin whose
 * last load failed shows "failed (last load: REASON)" from the load memory
 * until its file changes or `tp-backends check NAME` loads it again. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tp_backends.h"

static void print_table(const tp_backend_info *infos, int count) {
    int name_width = 4, tags_width = 4, source_width = 6;
    char source[4096];
    for (int i = 0; i < count; i++) {
        int name = (int)strlen(infos[i].name), tags = (int)strlen(infos[i].tags);
        int where = (int)strlen(source_text(&infos[i], source, sizeof source));
        name_width = name > name_width ? name : name_width;
        tags_width = tags > tags_width ? tags : tags_width;
        source_width = where > source_width ? where : source_width;
    }
    printf("%-*s  %-11s  %-*s  %-*s  %s\n", name_width, "NAME", "STATUS", tags_width, "TAGS",
           source_width, "SOURCE", "REASON / DESCRIPTION");
    for (int i = 0; i < count; i++) {
        const tp_backend_info *info = &infos[i];
        const char *detail = *info->reason ? info->reason : info->description;
        /* a remembered failure: this process loaded nothing */
        printf("%-*s  %-11s  %-*s  %-*s  %s%s%s\n", name_width, info->name,
               tp_backend_state_name(info->state), tags_width, *info->tags ? info->tags : "-",
               source_width, source_text(info, source, sizeof source),
               info->remembered ? "(last load: " : "", detail, info->remembered ? ")" : "");
    }
}

static void print_string_array(const char *const *items, int count) {
    putchar('[');
    for (int i = 0; i < count; i++) {
        if (i) fputs(", ", stdout);
        if (items[i])
            json_string(stdout, items[i]);
        else
            fputs("null", stdout);
    }
    putchar(']');
}

static void print_json(const tp_backend_info *infos, int count, const char *pick, const char *why) {
    fputs("{\"backends\": [", stdout);
    for (int i = 0; i < count; i++) {
        const tp_backend_info *info = &infos[i];
        char source[4096];
        fputs(i ? ",\n  {" : "\n  {", stdout);
        fputs("\"name\": ", stdout), json_string(stdout, info->name);
        fputs(", \"status\": ", stdout), json_string(stdout, tp_backend_state_name(info->state));
        fputs(", \"tags\": ", stdout), json_string(stdout, info->tags);
        fputs(", \"source\": ", stdout),
            json_string(stdout, source_text(info, source, sizeof source));
        fputs(", \"reason\": ", stdout), json_string(stdout, info->reason);
        printf(", \"remembered\": %s", info->remembered ? "true" : "false");
        fputs(", \"description\": ", stdout), json_string(stdout, info->description);
        fputs(", \"library\": ", stdout), json_string(stdout, info->library);
        fputs(", \"entry\": ", stdout), json_string(stdout, info->entry);
        printf(", \"contract\": %d, \"min_contract\": %d, \"priority\": %d", info->contract,
               info->min_contract, info->priority);
        fputs(", \"min_core\": ", stdout), json_string(stdout, info->min_core);
        fputs(", \"max_core\": ", stdout), json_string(stdout, info->max_core);
        fputs(", \"requires\": ", stdout),
            print_string_array(info->required_sonames, info->num_required_sonames);
        fputs(", \"requires_found\": ", stdout);
        print_string_array(info->required_sonames_found, info->num_required_sonames);
        fputs(", \"warnings\": ", stdout), print_string_array(info->warnings, info->num_warnings);
        putchar('}');
    }
    fputs("\n], \"auto\": {\"pick\": ", stdout);
    if (*pick)
        json_string(stdout, pick);
    else
        fputs("null", stdout);
    fputs(", \"why\": ", stdout), json_string(stdout, why);
    fputs("}, \"problems\": [", stdout);
    char *problems = NULL;
    if (tp_backend_problems(&problems) == TP_OK) {
        int n = 0;
        for (char *line = strtok(problems, "\n"); line; line = strtok(NULL, "\n"))
            fputs(n++ ? ", " : "", stdout), json_string(stdout, line);
        tp_free(problems);
    }
    fputs("]}\n", stdout);
}

int command_list(int argc, char **argv) {
    bool all = false, json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0)
            all = true;
        else if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (strcmp(argv[i], "--help") == 0) {
            puts("usage: tp-backends list [--all] [--json]");
            return EXIT_OK;
        } else {
            fprintf(stderr, "tp-backends list: unknown argument '%s' (expected --all, --json)\n",
                    argv[i]);
            return EXIT_USAGE;
        }
    }
    tp_backend_list_options options = TP_BACKEND_LIST_OPTIONS_INIT;
    options.exclude_tags = all ? "" : NULL;
    options.include_unavailable = true;
    options.include_shadowed = true;
    tp_backend_info *infos = NULL;
    int count = 0;
    if (tp_backend_list(&options, &infos, &count) != TP_OK) {
        fprintf(stderr, "tp-backends list: %s\n", tp_last_error());
        return EXIT_FAILED;
    }
    char pick[256], why[8192];
    bool picked = auto_pick_explain(infos, count, pick, sizeof pick, why, sizeof why);
    if (json) {
        print_json(infos, count, pick, why);
    } else {
        print_table(infos, count);
        if (picked)
            printf("auto picks '%s': %s\n", pick, why);
        else
            printf("auto picks nothing: %s\n", why);
        if (!all) puts("(debug and experimental backends hidden; --all shows them)");
        print_problems(stdout);
    }
    tp_backend_info_release(infos, count);
    return EXIT_OK;
}
