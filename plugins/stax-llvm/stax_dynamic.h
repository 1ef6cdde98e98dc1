/* stax-llvm — dynamic shapes (stax_dynamic.c): the executable's copy of the
 * graph view, binding symbols from run()'s buffers, and the generic plan whose
 * size-derived integers are kernel arguments. Internal. */
#ifndef STAX_DYNAMIC_H
#define STAX_DYNAMIC_H

#include "stax_internal.h"
#include "tpcommon_symbols.h"

typedef struct stax_dynamic {
    const tp_plugin_host *host; /* the context's, set before prepare */
    tp_plugin_graph graph;      /* owned copy */
    stax_decisions decisions;   /* recorded at the generic binding */
    char *skeleton;             /* the generic IR with every integer replaced by \x01 */
    int64_t *numbers;           /* the generic IR's integers */
    uint8_t *is_param;          /* per integer: a size argument */
    int32_t num_numbers, num_params;
    int64_t *params;  /* the size arguments for `symbols` */
    int64_t *symbols; /* the binding the current program is for */
    bool bound;
} stax_dynamic;

/* Whether any value of `g` has a symbolic dimension. */
bool stax_graph_is_dynamic(const tp_plugin_graph *g);
int32_t stax_graph_copy(const tp_plugin_graph *src, tp_plugin_graph *dst);
void stax_graph_free(tp_plugin_graph *g);

/* Plans `graph` at two generic bindings and builds the template IR (size
 * integers as arguments) into *template_ir. TP_PLUGIN_UNAVAILABLE: the plans
 * differ in structure; use a static compile. */
int32_t stax_dynamic_prepare(const tp_plugin_graph *graph, const char *cpu, const char *features,
                             stax_dynamic *d, char **template_ir, char *error, size_t error_size);
/* Plans at `symbols` replaying the generic decisions: *out (without IR) and
 * d->params for these sizes. */
int32_t stax_dynamic_plan(stax_dynamic *d, const int64_t *symbols, const char *cpu,
                          const char *features, stax_program *out, char *error, size_t error_size);
void stax_dynamic_free(stax_dynamic *d);

#endif
