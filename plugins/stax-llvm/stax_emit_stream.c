/* stax-llvm — the flat pointwise loop whose stores bypass the cache.
 *
 * A plain store to a line that is not in cache first reads the line (the
 * write-allocate read), so a kernel writing a large output moves each output
 * byte twice: `add` on 16M floats reads 128 MB, writes 64 MB and reads those
 * 64 MB first. A non-temporal store writes the line without reading it. The
 * x86 instruction needs a whole, aligned vector, which the loop LLVM
 * vectorizes from scalar code does not promise, so the loop computes each
 * aligned run of STAX_STREAM_CHUNK_BYTES into a buffer on the stack (in L1)
 * and copies the buffer out with aligned non-temporal vector stores; the
 * elements before the first aligned address and after the last whole chunk
 * are stored plainly. One copy of the expression serves both: its loop
 * stores through a base pointer chosen per run.
 *
 * Only a graph output larger than the writing threads' L2 caches several
 * times over is streamed (stax_streams_output): an output that another step
 * of the executable reads is better left in cache, and so is a small one. */
#include <stdio.h>
#include <string.h>

#include "stax_emit_core.h"

/* a run written through the buffer: 512 f32, in L1 with the loop's inputs.
 * With 1 KiB runs the loop's setup per run made tanh(x*2+1)*x over 16M
 * floats slower streamed than plain (6.8 against 5.9-6.3 ms, 2 threads);
 * 2 KiB and 4 KiB measured alike. */
#define STAX_STREAM_CHUNK_BYTES 2048
#define STAX_STREAM_LINE_BYTES  64

/* With STAX_STREAM_STORES unset (or auto), a graph output of at least four
 * times the writing threads' L2 caches, and at least 8 MiB, is streamed: it
 * cannot stay in the threads' caches, and no step of the executable reads it
 * back. On the 2-core Xeon with 2 MiB of L2 (and a 480 MiB L3), 2 threads,
 * f32 `a + b`: 16M elements 6.2-6.5 ms plain, 4.6-4.7 streamed; 4M 1.2-1.3
 * against 0.9-1.0, with a pass that reads the output right after as fast
 * either way; 1M (4 MiB) 0.31 against 0.22 alone, but the pass reading it
 * after took 0.14 ms against 0.21, so a 4 MiB output stays plain. */
#define STAX_STREAM_FLOOR_BYTES (8.0 * 1024 * 1024)
#define STAX_STREAM_L2_FALLBACK (1024.0 * 1024)

int32_t stax_stream_threshold(const tp_plugin_host *host, int64_t threads, double *min_bytes,
                              char *error, size_t error_size) {
    stax_switch setting;
    *min_bytes = 0;
    int32_t status = stax_switch_setting(host, "STAX_STREAM_STORES", &setting, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
#if defined(__x86_64__) || defined(__i386__)
    if (setting == STAX_SWITCH_OFF) return TP_PLUGIN_OK;
    if (setting == STAX_SWITCH_ON) { /* every graph output, of any size */
        *min_bytes = 1;
        return TP_PLUGIN_OK;
    }
    double l2 = stax_cache_bytes(2);
    double bytes =
        4.0 * (l2 > 0 ? l2 : STAX_STREAM_L2_FALLBACK) * (double)(threads > 1 ? threads : 1);
    *min_bytes = bytes > STAX_STREAM_FLOOR_BYTES ? bytes : STAX_STREAM_FLOOR_BYTES;
#else
    (void)threads, (void)setting; /* the streaming stores and their fence are x86's */
#endif
    return TP_PLUGIN_OK;
}

bool stax_streams_output(stax_emit_graph *g, const stax_view *target, int64_t numel,
                         int32_t dtype) {
    if (g->stream_min_bytes <= 0 || target->slot < 0) return false;
    size_t size = tpcommon_dtype_size(dtype);
    if (size == 0 || STAX_STREAM_LINE_BYTES % size != 0) return false;
    return g->slots[target->slot].kind == STAX_SLOT_OUTPUT &&
           (double)numel * (double)size >= (double)g->stream_min_bytes;
}

void stax_emit_streamed_flat_loop(fn_ctx *f, int32_t v, bool copy, const stax_view *target,
                                  int32_t dtype) {
    const char *ty = stax_ty(dtype);
    int64_t size = (int64_t)tpcommon_dtype_size(dtype);
    int64_t chunk = STAX_STREAM_CHUNK_BYTES / size;
    int id = f->next_label++;
    tpcommon_buf_printf(&f->allocas, "  %%sbuf%d = alloca [%d x i8], align %d\n", id,
                        STAX_STREAM_CHUNK_BYTES, STAX_STREAM_LINE_BYTES);
    ir_val iv = var_new(f, TP_PLUGIN_I64, (ir_val){.s = "%begin", .t = TP_PLUGIN_I64});
    emit(f, "  br label %%sh%d", id);
    emit(f, "sh%d:", id);
    ir_val i = var_get(f, iv);
    emit(f, "  %%sc%d = icmp slt i64 %s, %%end", id, i.s);
    emit(f, "  br i1 %%sc%d, label %%sb%d, label %%sx%d", id, id, id);
    emit(f, "sb%d:", id);
    /* this run: a whole chunk when element i is line-aligned and a chunk is
     * left, else up to the next line (or the end) stored plainly */
    ir_val at = bin(f, "add nsw", i, lit_int(TP_PLUGIN_I64, target->offset));
    ir_val out = slot_gep(f, target->slot, dtype, at.s);
    ir_val address = fresh(f, TP_PLUGIN_I64);
    emit(f, "  %s = ptrtoint ptr %s to i64", address.s, out.s);
    ir_val misaligned = bin(f, "and", address, lit_int(TP_PLUGIN_I64, STAX_STREAM_LINE_BYTES - 1));
    ir_val left = bin(f, "sub nsw", (ir_val){.s = "%end", .t = TP_PLUGIN_I64}, i);
    ir_val aligned = cmp(f, "icmp eq", misaligned, lit_int(TP_PLUGIN_I64, 0));
    ir_val whole = bin(f, "and", aligned, cmp(f, "icmp sge", left, lit_int(TP_PLUGIN_I64, chunk)));
    /* elements to the next line; at least one, for an element address that
     * is not a multiple of the element size and so never reaches a line */
    ir_val to_line =
        bin(f, "udiv", bin(f, "sub", lit_int(TP_PLUGIN_I64, STAX_STREAM_LINE_BYTES), misaligned),
            lit_int(TP_PLUGIN_I64, size));
    to_line = sel(f, cmp(f, "icmp eq", to_line, lit_int(TP_PLUGIN_I64, 0)),
                  lit_int(TP_PLUGIN_I64, 1), to_line);
    ir_val plain = sel(f, aligned, left, sel(f, cmp(f, "icmp slt", to_line, left), to_line, left));
    ir_val count = sel(f, whole, lit_int(TP_PLUGIN_I64, chunk), plain);
    ir_val stop = bin(f, "add nsw", i, count);
    /* the run's base: element j of the run at base[j] (the buffer) or at the
     * output's own element j */
    ir_val back = bin(f, "sub nsw", lit_int(TP_PLUGIN_I64, 0), i);
    ir_val into_buffer = fresh(f, TP_PLUGIN_I64);
    emit(f, "  %s = getelementptr %s, ptr %%sbuf%d, i64 %s", into_buffer.s, ty, id, back.s);
    ir_val into_output = slot_gep(f, target->slot, dtype, lit_int(TP_PLUGIN_I64, target->offset).s);
    ir_val base = fresh(f, TP_PLUGIN_I64);
    emit(f, "  %s = select i1 %s, ptr %s, ptr %s", base.s, whole.s, into_buffer.s, into_output.s);
    int loop = loop_open(f, i.s, stop.s, f->idx[0]);
    loop_keep_unrolling(f, loop);
    ir_val value = copy ? lower_value(f, v) : lower_compute(f, v);
    value = conv(f, value, dtype);
    ir_val p = fresh(f, TP_PLUGIN_I64);
    emit(f, "  %s = getelementptr %s, ptr %s, i64 %s", p.s, ty, base.s, f->idx[0]);
    emit(f, "  store %s %s, ptr %s", ty, value.s, p.s);
    loop_close(f, loop);
    /* a whole chunk goes out line by line, past the cache */
    emit(f, "  br i1 %s, label %%ss%d, label %%sn%d", whole.s, id, id);
    emit(f, "ss%d:", id);
    char line[32], lines[32];
    snprintf(lines, sizeof lines, "%d", STAX_STREAM_CHUNK_BYTES / STAX_STREAM_LINE_BYTES);
    int copy_loop = loop_open(f, "0", lines, line);
    loop_keep_unrolling(f, copy_loop);
    ir_val from = fresh(f, TP_PLUGIN_I64), to = fresh(f, TP_PLUGIN_I64);
    ir_val bytes = fresh(f, TP_PLUGIN_F32);
    emit(f, "  %s = getelementptr <16 x float>, ptr %%sbuf%d, i64 %s", from.s, id, line);
    emit(f, "  %s = getelementptr <16 x float>, ptr %s, i64 %s", to.s, out.s, line);
    emit(f, "  %s = load <16 x float>, ptr %s, align %d", bytes.s, from.s, STAX_STREAM_LINE_BYTES);
    emit(f, "  store <16 x float> %s, ptr %s, align %d, !nontemporal !{i32 1}", bytes.s, to.s,
         STAX_STREAM_LINE_BYTES);
    loop_close(f, copy_loop);
    emit(f, "  br label %%sn%d", id);
    emit(f, "sn%d:", id);
    var_set(f, iv, stop);
    emit(f, "  br label %%sh%d", id);
    emit(f, "sx%d:", id);
    /* streamed stores are weakly ordered: they are visible before the thread
     * reports its range done */
    emit(f, "  call void @llvm.x86.sse.sfence()");
}
