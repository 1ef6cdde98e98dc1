/* tp_ctx: the scope stack of owned tensor references and the sticky first
 * error (ops.h, ctx_internal.h). Running ops is eager.c's job. */
#include "ctx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tp_ctx *tp_ctx_create(void) {
    tp_ctx *ctx = calloc(1, sizeof *ctx);
    return ctx;
}

void tp_ctx_destroy(tp_ctx *ctx) {
    if (!ctx) return;
    for (size_t i = 0; i < ctx->num_owned; i++) tp_tensor_release(ctx->owned[i]);
    free(ctx->owned);
    free(ctx);
}

tp_status tp_ctx_status(const tp_ctx *ctx) {
    return ctx ? ctx->status : TP_ERR_INVALID_ARGUMENT;
}

const char *tp_ctx_error(const tp_ctx *ctx) {
    if (!ctx) return "tp_ctx_error: the ctx is NULL";
    return ctx->status == TP_OK ? "" : ctx->error;
}

void tp_ctx_clear_error(tp_ctx *ctx) {
    if (!ctx) return;
    ctx->status = TP_OK;
    ctx->error[0] = '\0';
}

tp_status tp_ctx_record_error(tp_ctx *ctx, tp_status status) {
    if (ctx && ctx->status == TP_OK && status != TP_OK) {
        ctx->status = status;
        snprintf(ctx->error, sizeof ctx->error, "%s", tp_last_error());
    }
    return status;
}

size_t tp_ctx_scope_begin(tp_ctx *ctx) {
    return ctx ? ctx->num_owned : 0;
}

static bool is_kept(const tp_tensor *tensor, tp_tensor *const *keep, int num_keep) {
    for (int i = 0; i < num_keep; i++)
        if (keep[i] == tensor) return true;
    return false;
}

void tp_ctx_scope_end(tp_ctx *ctx, size_t mark, tp_tensor *const *keep, int num_keep) {
    if (!ctx || mark >= ctx->num_owned) return;
    /* Kept references slide down to the mark: they now belong to the
     * enclosing scope, in their original order. */
    size_t next = mark;
    for (size_t i = mark; i < ctx->num_owned; i++) {
        tp_tensor *tensor = ctx->owned[i];
        if (keep && num_keep > 0 && is_kept(tensor, keep, num_keep))
            ctx->owned[next++] = tensor;
        else
            tp_tensor_release(tensor);
    }
    ctx->num_owned = next;
}

tp_tensor *tp_ctx_adopt(tp_ctx *ctx, tp_tensor *tensor) {
    if (!tensor) return NULL;
    if (!ctx) {
        tp_tensor_release(tensor);
        return NULL;
    }
    if (ctx->num_owned == ctx->capacity) {
        size_t capacity = ctx->capacity ? ctx->capacity * 2 : 64;
        tp_tensor **owned = realloc(ctx->owned, capacity * sizeof *owned);
        if (!owned) {
            tp_tensor_release(tensor);
            tp_ctx_record_error(ctx, tp_error_set(TP_ERR_OUT_OF_MEMORY,
                                                  "tp_ctx_adopt: out of memory growing the scope "
                                                  "to %zu tensors",
                                                  capacity));
            return NULL;
        }
        ctx->owned = owned;
        ctx->capacity = capacity;
    }
    ctx->owned[ctx->num_owned++] = tensor;
    return tensor;
}

tp_ctx_recorder *tp_ctx_set_recorder(tp_ctx *ctx, tp_ctx_recorder *recorder) {
    tp_ctx_recorder *previous = ctx->recorder;
    ctx->recorder = recorder;
    return previous;
}
