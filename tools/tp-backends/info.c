/* tp-backends info NAME: everything the registry knows about one backend,
 * without loading it. */
#include <stdio.h>
#include <string.h>

#include "tp_backends.h"

static void print_other_claims(const char *name) {
    tp_backend_list_options options = TP_BACKEND_LIST_OPTIONS_INIT;
    options.exclude_tags = "";
    options.include_unavailable = true;
    options.include_shadowed = true;
    tp_backend_info *infos = NULL;
    int count = 0;
    if (tp_backend_list(&options, &infos, &count) != TP_OK) return;
    char source[4096];
    for (int i = 0; i < count; i++)
        if (infos[i].state == TP_BACKEND_SHADOWED && strcmp(infos[i].name, name) == 0)
            printf("also claimed:   %s (%s)\n", source_text(&infos[i], source, sizeof source),
                   infos[i].reason);
    tp_backend_info_release(infos, count);
}

int command_info(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        puts("usage: tp-backends info NAME");
        return EXIT_OK;
    }
    if (argc != 2) {
        fputs("usage: tp-backends info NAME\n", stderr);
        return EXIT_USAGE;
    }
    tp_backend_info *info = NULL;
    if (tp_backend_info_get(argv[1], &info) != TP_OK) {
        fprintf(stderr, "tp-backends: %s\n", tp_last_error());
        return EXIT_FAILED;
    }
    char source[4096];
    printf("name:           %s\n", info->name);
    printf("state:          %s\n", tp_backend_state_name(info->state));
    if (*info->reason) printf("reason:         %s\n", info->reason);
    printf("source:         %s\n", source_text(info, source, sizeof source));
    if (info->source == TP_BACKEND_SOURCE_INI) {
        printf("library:        %s\n", info->library);
        printf("entry:          %s\n", info->entry);
    }
    if (info->min_contract < info->contract)
        printf("contract:       revisions %d to %d", info->min_contract, info->contract);
    else
        printf("contract:       revision %d", info->contract);
    printf(" (this TensorPlay implements 1 to %d)\n", TP_BACKEND_CONTRACT_VERSION);
    printf("priority:       %d (for `auto`: the highest available backend wins; a probe may "
           "lower it)\n",
           info->priority);
    printf("core range:     %s .. %s (this TensorPlay is %s)\n",
           *info->min_core ? info->min_core : "any", *info->max_core ? info->max_core : "any",
           tp_version());
    if (info->num_required_sonames == 0) printf("requires:       (nothing)\n");
    for (int i = 0; i < info->num_required_sonames; i++)
        printf("requires:       %s: %s%s\n", info->required_sonames[i],
               info->required_sonames_found[i] ? "found at " : "MISSING",
               info->required_sonames_found[i] ? info->required_sonames_found[i] : "");
    printf("tags:           %s\n", *info->tags ? info->tags : "(none)");
    printf("description:    %s\n", info->description);
    if (*info->version) printf("version:        %s\n", info->version);
    for (int i = 0; i < info->num_warnings; i++) printf("warning:        %s\n", info->warnings[i]);
    print_other_claims(info->name);
    tp_backend_info_release(info, 1);
    return EXIT_OK;
}
