/* The tp_ctx struct and the capture hook. Internal to libtensorplay: eager.c
 * runs ops through it, capture (a later module) installs a recorder.
 *
 * A ctx holds:
 *   - a scope stack: one growable array of owned tensor references; a scope is
 *     the tail of the array past the mark tp_ctx_scope_begin returned;
 *   - the sticky first error (status + message naming the op and shapes);
 *   - a recorder, NULL in eager mode.
 */
#ifndef TP_CORE_OPS_CTX_INTERNAL_H
#define TP_CORE_OPS_CTX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../base/error.h"
#include "op_table.h"
#include "tensorplay/ops.h"

/* What an item read asked for (tp_item_bool / _i64 / _f64). */
typedef enum tp_item_kind { TP_ITEM_BOOL, TP_ITEM_I64, TP_ITEM_F64 } tp_item_kind;

/* The capture hook. Capture embeds this struct in its own state (first
 * member, or recovered with offsetof) and installs it with
 * tp_ctx_set_recorder; eager.c calls each non-NULL callback:
 *
 *   trace_op    instead of running the op's kernel: after the op's shape
 *               rule accepted the inputs, the recorder makes *result (a new
 *               reference of `result_type`, normally deferred: metadata
 *               only) and records the op. When set, on_op is not called.
 *   on_op       after an op ran successfully, before its result enters the
 *               scope; `result` is the new tensor (its values are real).
 *               A non-OK status (of either callback) fails the op: eager.c
 *               releases the result, returns NULL and keeps the thread's
 *               error message (set it with tp_error_set) as the ctx's error.
 *   on_metadata when the user reads a tensor's shape: tp_ndim (axis -1) or
 *               tp_dim (the normalised axis). Only for valid reads.
 *   on_item     before a value read (tp_item_*) of a one-element `tensor`
 *               returns: the recorder records it and makes sure the
 *               tensor's value is computed; a non-OK status fails the read
 *               (the ctx keeps the error, the read returns its default).
 *
 * The recorder must not retain the ctx; the ctx never frees the recorder. */
typedef struct tp_ctx_recorder tp_ctx_recorder;
struct tp_ctx_recorder {
    tp_status (*on_op)(tp_ctx_recorder *recorder, const tp_op_def *op, tp_tensor *const *inputs,
                       int num_inputs, const tp_attrs *attrs, tp_tensor *result);
    void (*on_metadata)(tp_ctx_recorder *recorder, tp_tensor *tensor, int axis_or_minus1);
    tp_status (*on_item)(tp_ctx_recorder *recorder, tp_tensor *tensor, tp_item_kind kind);
    tp_status (*trace_op)(tp_ctx_recorder *recorder, const tp_op_def *op, tp_tensor *const *inputs,
                          int num_inputs, const tp_attrs *attrs, const tp_type *result_type,
                          tp_tensor **result);
};

struct tp_ctx {
    tp_tensor **owned; /* one reference each; scopes are tails of this array */
    size_t num_owned, capacity;
    tp_status status; /* the first error since creation / clear_error */
    char error[TP_ERROR_MESSAGE_MAX];
    tp_ctx_recorder *recorder; /* NULL in eager mode */
};

/* Installs (or with NULL removes) the recorder; returns the previous one. */
tp_ctx_recorder *tp_ctx_set_recorder(tp_ctx *ctx, tp_ctx_recorder *recorder);

/* Keeps the thread's current error message as the ctx's error if it holds
 * none yet (sticky: the first one wins). Returns `status`. */
tp_status tp_ctx_record_error(tp_ctx *ctx, tp_status status);

#endif
