/* stax-llvm — the scratch arena of a program: which steps touch each scratch
 * slot, the live range [first step, last step] that follows, the slots'
 * offsets in one buffer (stax_arena_layout.c) and that buffer. It owns
 * nothing the planner decides (slots, views, steps) and only reads them.
 *
 * What the arena relies on, from an audit of every step kind (keep it true
 * when a step kind is added or changed):
 * - No step reads a scratch slot before writing it in the same run, and no
 *   step relies on a slot being zero or keeping its content from an earlier
 *   run: kernels write every element of their target (pad writes its fill
 *   value, concat copies every part); im2col (stax_window.c) writes the
 *   padding taps' zeros itself; the matmul drivers overwrite C on the first
 *   k block (and zero it themselves for k == 0); conv_transpose, depthwise
 *   and pool start each plane from the bias or zero; a conv's fused
 *   epilogue reads each block of the conv's result after the step wrote it
 *   (and reads its other operands, such as a residual, inside the window
 *   step: their slots are touched by that step); attention keeps its
 *   running max, sum and accumulator in the workspace, not in a slot.
 * - The index check's status word is armed before its step on every run
 *   (stax_index_check_arm), so it need not start cleared.
 * - max-autotune times the packed matmuls on the executable's scratch slots
 *   at compile; stax_autotune.c clears them first (no denormals or NaN in
 *   the timing) and every run writes them again.
 * So every scratch slot goes into the arena; none is kept out. A step kind
 * that adds an accumulator in a slot must either clear it where it is used
 * or be kept out here. Graph inputs, outputs and constants are not scratch
 * and are never placed.
 * The same walk tells the planner which constants a run reads
 * (stax_program_slots_touched): the raw weights of a conv or matmul whose
 * packed copy the step reads instead are not touched (they are always
 * constants, so the arena's ranges do not change). */
#include <stdlib.h>
#include <string.h>

#include "stax_arena.h"
#include "stax_internal.h"

int32_t stax_arena_setting(const tp_plugin_host *host, bool *enabled, char *error,
                           size_t error_size) {
    const char *setting = host && host->getenv ? host->getenv("STAX_ARENA") : NULL;
    *enabled = true;
    if (!setting || !*setting || !strcmp(setting, "on")) return TP_PLUGIN_OK;
    if (!strcmp(setting, "off")) {
        *enabled = false;
        return TP_PLUGIN_OK;
    }
    return tpcommon_error(error, error_size,
                          "stax: STAX_ARENA is '%s'; use on or off (or unset it)", setting);
}

static void touch(const stax_program *prog, stax_live_range *ranges, int32_t slot, int32_t step) {
    if (slot < 0 || slot >= prog->num_slots) return;
    if (step < ranges[slot].first) ranges[slot].first = step;
    if (step > ranges[slot].last) ranges[slot].last = step;
}

static void touch_kernel(const stax_program *prog, stax_live_range *ranges, int32_t kernel,
                         int32_t step) {
    if (kernel < 0 || kernel >= prog->num_kernels) return;
    const stax_slot_list *list = &prog->kernel_slots[kernel];
    for (int32_t i = 0; i < list->count; i++) touch(prog, ranges, list->slots[i], step);
}

/* A product's operands and its epilogue kernel; not `packed_away`, a slot
 * whose packed copy the step reads instead (-1: none), nor B when B was
 * packed at compile (prepack_constant_b). */
static void touch_gemm(const stax_program *prog, stax_live_range *ranges, const stax_gemm *gemm,
                       int32_t packed_away, int32_t s) {
    if (gemm->a_slot != packed_away) touch(prog, ranges, gemm->a_slot, s);
    if (gemm->b_slot != packed_away && gemm->packed_b_kc <= 0) touch(prog, ranges, gemm->b_slot, s);
    touch(prog, ranges, gemm->c_slot, s);
    touch_kernel(prog, ranges, gemm->epilogue, s);
}

/* Every slot step `s` reads or writes, by step kind. */
static void touch_step(const stax_program *prog, stax_live_range *ranges, int32_t s) {
    const stax_step *step = &prog->steps[s];
    switch (step->kind) {
    case STAX_STEP_KERNEL:
        touch_kernel(prog, ranges, step->kernel, s);
        if (step->check.where) {
            touch(prog, ranges, step->check.status_slot, s);
            touch(prog, ranges, step->check.indices.slot, s);
        }
        break;
    case STAX_STEP_GEMM:
    case STAX_STEP_PACKED_GEMM:
        touch_gemm(prog, ranges, &step->gemm, -1, s);
        break;
    case STAX_STEP_WINDOW: {
        const stax_window *w = &step->window;
        /* weights packed at compile (pack_constant_weights) are read from there */
        int32_t packed_away = w->packed_w_slot >= 0 ? w->w_slot : -1;
        int32_t slots[] = {w->x_slot, w->b_slot, w->out_slot, w->col_slot};
        for (size_t i = 0; i < sizeof slots / sizeof *slots; i++) touch(prog, ranges, slots[i], s);
        if (packed_away < 0) touch(prog, ranges, w->w_slot, s);
        /* a fused epilogue reads its other operands (a residual) inside the step */
        touch_kernel(prog, ranges, w->epilogue, s);
        bool gemm_method =
            w->method == STAX_WINDOW_GEMM_IM2COL || w->method == STAX_WINDOW_GEMM_POINTWISE;
        if (gemm_method) /* step->gemm: the same slots, and any epilogue kernel */
            touch_gemm(prog, ranges, &step->gemm, packed_away, s);
        break;
    }
    case STAX_STEP_ATTENTION: {
        const stax_attention *at = &step->attention;
        for (int i = 0; i < 5; i++) touch(prog, ranges, at->slot[i], s);
        for (int32_t i = 0; i < at->num_scales; i++) touch(prog, ranges, at->scale_slot[i], s);
        break;
    }
    }
}

void stax_program_slots_touched(const stax_program *prog, bool *read) {
    stax_live_range *ranges = malloc(sizeof *ranges * ((size_t)prog->num_slots + 1));
    if (!ranges) { /* without the walk, every slot counts as read */
        for (int32_t s = 0; s < prog->num_slots; s++) read[s] = true;
        return;
    }
    for (int32_t s = 0; s < prog->num_slots; s++) ranges[s] = (stax_live_range){INT32_MAX, -1, 0};
    for (int32_t s = 0; s < prog->num_steps; s++) touch_step(prog, ranges, s);
    for (int32_t s = 0; s < prog->num_slots; s++) read[s] = ranges[s].first <= ranges[s].last;
    free(ranges);
}

/* STAX_ARENA=off: a zeroed buffer per scratch slot, as before the arena. */
static int32_t allocate_own_buffers(stax_program *prog) {
    for (int32_t s = 0; s < prog->num_slots; s++) {
        stax_slot *slot = &prog->slots[s];
        if (slot->kind != STAX_SLOT_SCRATCH) continue;
        slot->data = stax_alloc_aligned(prog->host, slot->bytes);
        if (!slot->data) return TP_PLUGIN_ERROR;
        memset(slot->data, 0, slot->bytes);
    }
    return TP_PLUGIN_OK;
}

/* The scratch slots' ranges, in slot order, compacted into `ranges`;
 * `which[i]` is range i's slot. A slot no step touches lives throughout. */
static int32_t scratch_ranges(const stax_program *prog, stax_live_range *all,
                              stax_live_range *ranges, int32_t *which) {
    for (int32_t s = 0; s < prog->num_slots; s++)
        all[s] = (stax_live_range){INT32_MAX, -1, prog->slots[s].bytes};
    for (int32_t s = 0; s < prog->num_steps; s++) touch_step(prog, all, s);
    int32_t count = 0;
    for (int32_t s = 0; s < prog->num_slots; s++) {
        if (prog->slots[s].kind != STAX_SLOT_SCRATCH) continue;
        if (all[s].first > all[s].last) all[s].first = 0, all[s].last = prog->num_steps;
        which[count] = s;
        ranges[count++] = all[s];
    }
    return count;
}

int32_t stax_arena_place(stax_program *prog, bool allocate, char *error, size_t error_size) {
    bool enabled = true;
    int32_t status = stax_arena_setting(prog->host, &enabled, error, error_size);
    if (status != TP_PLUGIN_OK) return status;
    prog->arena_bytes = prog->scratch_bytes = 0;
    for (int32_t s = 0; s < prog->num_slots; s++)
        if (prog->slots[s].kind == STAX_SLOT_SCRATCH)
            prog->scratch_bytes +=
                (prog->slots[s].bytes + STAX_ARENA_ALIGN - 1) / STAX_ARENA_ALIGN * STAX_ARENA_ALIGN;
    if (!enabled)
        return !allocate || allocate_own_buffers(prog) == TP_PLUGIN_OK
                   ? TP_PLUGIN_OK
                   : tpcommon_error(error, error_size, "stax: out of memory for scratch buffers");
    size_t n = (size_t)prog->num_slots + 1;
    stax_live_range *all = malloc(sizeof *all * n), *ranges = malloc(sizeof *ranges * n);
    int32_t *which = malloc(sizeof *which * n);
    size_t *offsets = malloc(sizeof *offsets * n);
    int32_t count =
        all && ranges && which && offsets ? scratch_ranges(prog, all, ranges, which) : -1;
    if (count >= 0 && stax_arena_assign_offsets(ranges, count, offsets, &prog->arena_bytes) == 0) {
        for (int32_t i = 0; i < count; i++)
            prog->slots[which[i]].arena_offset = (int64_t)offsets[i];
        status = TP_PLUGIN_OK;
    } else {
        status = TP_PLUGIN_ERROR;
    }
    free(all), free(ranges), free(which), free(offsets);
    if (status == TP_PLUGIN_OK && allocate && prog->arena_bytes > 0) {
        /* not cleared: no step reads scratch before writing it (see above) */
        prog->arena = stax_alloc_aligned(prog->host, prog->arena_bytes);
        if (!prog->arena) status = TP_PLUGIN_ERROR;
        for (int32_t s = 0; prog->arena && s < prog->num_slots; s++)
            if (prog->slots[s].arena_offset >= 0)
                prog->slots[s].data = (char *)prog->arena + prog->slots[s].arena_offset;
    }
    return status == TP_PLUGIN_OK
               ? status
               : tpcommon_error(error, error_size, "stax: out of memory placing scratch slots");
}
