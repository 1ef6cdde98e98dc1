/* plugins/common — binding a graph's dimension symbols (plugin.h: a dim < 0
 * is symbol -dim - 1) to sizes: from the input metadata at compile, from the
 * input buffers at run. Each input is checked against its declared type
 * (dtype, rank, every static dim) and each symbol must get one size from
 * every input dim it names; a mismatch is an error naming the input, its
 * declared type and what was given. Built only on plugin.h. */
#ifndef TPCOMMON_SYMBOLS_H
#define TPCOMMON_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "tensorplay/plugin.h"

/* Binds symbols[0 .. graph->num_symbols) from compile's input metadata
 * (`num_inputs` entries in graph input order). A symbol no input names is
 * left -1. Returns TP_PLUGIN_OK, or TP_PLUGIN_ERROR with the reason in
 * error[0..error_size). */
int32_t tpcommon_bind_symbols_from_metas(const tp_plugin_graph *graph,
                                         const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                                         int64_t *symbols, char *error, size_t error_size);
/* The same from run's input buffers. */
int32_t tpcommon_bind_symbols_from_buffers(const tp_plugin_graph *graph,
                                           const tp_plugin_buffer *inputs, int32_t num_inputs,
                                           int64_t *symbols, char *error, size_t error_size);

#endif
