/* stax-llvm — the conversion kernel: one contiguous buffer of f16/bf16 into
 * another of f32, or back, element by element with the emitter's
 * conversions (exact widening, nearest-even rounding). The window steps run
 * on f32 (stax_window.c), so the planner brackets an f16/bf16 conv or pool
 * with these (stax_plan.c). Owns nothing else. */
#include "stax_emit_core.h"

#include <stdio.h>

int32_t stax_emit_convert(stax_emit_graph *g, const char *name, const stax_view *from,
                          int32_t from_dtype, const stax_view *to, int32_t to_dtype) {
    fn_ctx f;
    fn_init(&f, g);
    char index_name[32];
    int loop = loop_open(&f, "%begin", "%end", index_name);
    ir_val index = {.t = TP_PLUGIN_I64};
    snprintf(index.s, sizeof index.s, "%s", index_name);
    ir_val source = slot_gep(&f, from->slot, from_dtype,
                             bin(&f, "add", index, lit_int(TP_PLUGIN_I64, from->offset)).s);
    ir_val element = fresh(&f, from_dtype);
    emit(&f, "  %s = load %s, ptr %s", element.s, stax_ty(from_dtype), source.s);
    ir_val converted = conv(&f, element, to_dtype);
    ir_val target = slot_gep(&f, to->slot, to_dtype,
                             bin(&f, "add", index, lit_int(TP_PLUGIN_I64, to->offset)).s);
    emit(&f, "  store %s %s, ptr %s", stax_ty(to_dtype), converted.s, target.s);
    loop_close(&f, loop);
    int32_t status = fn_finish(&f, name);
    fn_free(&f);
    return status;
}
