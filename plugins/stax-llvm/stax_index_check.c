/* stax-llvm — the run-time status of the steps that read indices from a
 * tensor (gather, gather_elements). Their kernels cannot stop a run, so each
 * chunk keeps the lowest out-of-range position it met and lowers the step's
 * status word to it with one atomic min at its end (a compare and a select
 * per index on the hot path, no branch). Here: arming that word before the
 * step, and after it turning a position into the error the reference kernel
 * (core/ops/index_ops.c) gives, with the index read back from the indices
 * tensor. Owns nothing else. */
#include <inttypes.h>
#include <stdio.h>

#include "stax_internal.h"

void stax_index_check_arm(const stax_step *step, void **slots) {
    if (step->check.where) *(uint64_t *)slots[step->check.status_slot] = STAX_INDEX_STATUS_CLEAR;
}

/* The index at C-order `position` of the indices' view. */
static int64_t index_at(const stax_index_check *check, void *const *slots, uint64_t position) {
    const stax_view *view = &check->indices;
    int64_t element = view->offset;
    uint64_t rest = position;
    for (int32_t d = view->ndim - 1; d >= 0; d--) {
        uint64_t size = view->dims[d] > 0 ? (uint64_t)view->dims[d] : 1;
        element += (int64_t)(rest % size) * view->strides[d];
        rest /= size;
    }
    const void *data = slots[view->slot];
    return check->indices_dtype == TP_PLUGIN_I64 ? ((const int64_t *)data)[element]
                                                 : ((const int32_t *)data)[element];
}

int32_t stax_index_check_report(const stax_step *step, void *const *slots, char *error,
                                size_t size) {
    const stax_index_check *check = &step->check;
    if (!check->where) return TP_PLUGIN_OK;
    uint64_t position = *(const uint64_t *)slots[check->status_slot];
    if (position == STAX_INDEX_STATUS_CLEAR) return TP_PLUGIN_OK;
    int64_t index = index_at(check, slots, position);
    if (check->length > 0)
        snprintf(error, size,
                 "stax: %s: index %" PRId64 " (at position %" PRIu64
                 " of the indices) is out of range for axis %" PRId64 " of size %" PRId64
                 " (valid indices: %" PRId64 " to %" PRId64 ")",
                 check->where, index, position, check->axis, check->length, -check->length,
                 check->length - 1);
    else
        snprintf(error, size,
                 "stax: %s: index %" PRId64 " (at position %" PRIu64
                 " of the indices) is out of range for axis %" PRId64
                 " of size 0 (an empty axis has no valid index)",
                 check->where, index, position, check->axis);
    return TP_PLUGIN_ERROR;
}
