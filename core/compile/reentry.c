/* Which wrappers this thread is inside of (their function is running: a
 * capture or an eager run), so a wrapper called from inside its own function
 * is an error rather than a deadlock on its lock. One thread-local list of
 * frames that live on the callers' stacks; nothing else. */
#include "compile_internal.h"

static _Thread_local tp_running_frame *innermost;

void tp_running_enter(tp_running_frame *frame, const tp_compiled *compiled) {
    frame->compiled = compiled;
    frame->outer = innermost;
    innermost = frame;
}

void tp_running_leave(tp_running_frame *frame) {
    innermost = frame->outer;
}

bool tp_running_inside(const tp_compiled *compiled) {
    for (const tp_running_frame *frame = innermost; frame; frame = frame->outer)
        if (frame->compiled == compiled) return true;
    return false;
}
