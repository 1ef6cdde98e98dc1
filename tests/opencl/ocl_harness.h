/* Helpers of the opencl suite: drive the `opencl` backend through the
 * registry exactly as a user would and compare it with the `eager` backend
 * (the reference interpreter, itself checked against NumPy elsewhere). */
#ifndef TP_TESTS_OPENCL_HARNESS_H
#define TP_TESTS_OPENCL_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "tensorplay/backend.h"
#include "tensorplay/graph.h"
#include "tensorplay/tensor.h"

/* Points TP_CACHE_DIR and POCL_CACHE_DIR at this run's temporary folder (call
 * from the suite factory, before any test forks). */
void oclt_environment(void);
/* True when the opencl backend can be looked up (an ICD and a device). */
bool oclt_available(void);
tp_graph *oclt_parse(const char *text);
/* A tensor of random values suited to the dtype (floats in [-2, 2], integers
 * in [-5, 5], bools 0/1), reproducible from `seed`. */
tp_tensor *oclt_random(tp_dtype dtype, int ndim, const int64_t *dims, uint32_t seed);
/* Random inputs with the graph's static input shapes. */
void oclt_random_inputs(const tp_graph *graph, tp_tensor **inputs, uint32_t seed);
/* Compiles `graph` with opencl (options as given) and eager, runs both on
 * `inputs`, and checks every output agrees (floats: |a - b| <= atol + rtol
 * |b|, NaN where eager has NaN; others exactly). Fails the test otherwise. */
void oclt_check_against_eager(const tp_graph *graph, tp_tensor *const *inputs, int num_inputs,
                              const char *const *options, int num_options);
/* Parses `text`, makes random inputs from `seed` and checks. */
void oclt_check_text(const char *text, uint32_t seed);
/* Random inputs from `seed`, then oclt_check_against_eager (no options). */
void oclt_check_graph(const tp_graph *graph, uint32_t seed);

/* ---- building graphs (failures fail the test) ---- */
tp_graph *oclt_graph(const char *name);
tp_value_id oclt_input(tp_graph *graph, const char *name, tp_dtype dtype, int ndim,
                       const int64_t *dims);
/* A node; returns TP_NO_VALUE (and clears the error) when the op's dtype
 * rule refuses these operands, so tests can skip combinations the op table
 * does not define. */
tp_value_id oclt_try_node(tp_graph *graph, const char *op, const tp_value_id *operands, int count,
                          const tp_attrs *attrs);
tp_value_id oclt_node(tp_graph *graph, const char *op, const tp_value_id *operands, int count,
                      const tp_attrs *attrs);
tp_value_id oclt_unary(tp_graph *graph, const char *op, tp_value_id x);
tp_value_id oclt_binary(tp_graph *graph, const char *op, tp_value_id a, tp_value_id b);
void oclt_outputs(tp_graph *graph, const tp_value_id *values, int count);

#endif
