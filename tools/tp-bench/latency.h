/* Compile latency (cold and from the disk cache) and cache-hit call
 * overhead on stax, printed as a table line or one JSON object. */
#ifndef TP_BENCH_LATENCY_H
#define TP_BENCH_LATENCY_H

#include <stdbool.h>

void bench_compile_latency(bool json);

#endif
