/* Helpers shared by the tp-backends subcommands: JSON strings, source text,
 * file problems. */
#include <stdio.h>
#include <string.h>

#include "tp_backends.h"

void json_string(FILE *out, const char *text) {
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)(text ? text : ""); *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c == '\n')
            fputs("\\n", out);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

const char *source_text(const tp_backend_info *info, char *buf, size_t size) {
    switch (info->source) {
    case TP_BACKEND_SOURCE_BUILTIN:
        snprintf(buf, size, "built-in");
        break;
    case TP_BACKEND_SOURCE_REGISTERED:
        snprintf(buf, size, "registered");
        break;
    default:
        snprintf(buf, size, "%s:%d", info->file, info->line);
        break;
    }
    return buf;
}

void print_problems(FILE *out) {
    char *problems = NULL;
    if (tp_backend_problems(&problems) != TP_OK || !problems) return;
    if (*problems) {
        fputs("\nproblems:\n", out);
        for (char *line = strtok(problems, "\n"); line; line = strtok(NULL, "\n"))
            fprintf(out, "  %s\n", line);
    }
    tp_free(problems);
}
