/* tp-bench --kernels, the attention cases: stax's fused attention step
 * against the same graph with the fusion off, interleaved in one run
 * (attention_cases.c). */
#ifndef TP_BENCH_ATTENTION_CASES_H
#define TP_BENCH_ATTENTION_CASES_H

/* Runs attention-encoder, attention-gpt2, fusion-encoder and
 * fusion-gpt2-block (or those named in `only`); the fusion-* cases read the
 * model files from `models_dir`. Prints a table, or one JSON object per line;
 * returns 1 when a fused output differs from the unfused one. */
int bench_attention_cases(const char *only, const char *models_dir, int reps, int rounds,
                          int threads, int json);

#endif
