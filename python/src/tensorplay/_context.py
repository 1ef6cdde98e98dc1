"""Which tp_ctx an op call goes to: the capture ctx of the compiled function
running on this thread, else this thread's eager ctx. Owns the thread-local
state; nothing here calls an op."""
from __future__ import annotations

import threading
from typing import List, Optional, Tuple

from . import _lib


class Capture:
    """One run of a compiled function's Python body on this thread (capture or eager)."""

    __slots__ = ("ctx", "wrappers", "error", "output_count")

    def __init__(self, ctx: int) -> None:
        self.ctx = ctx
        self.wrappers: List[object] = []  # Tensors made during the run: detached at its end
        self.error: Optional[BaseException] = None
        self.output_count: Optional[int] = None


class _EagerCtx:
    """A thread's ctx for eager op calls; destroyed with the thread's local state."""

    __slots__ = ("ctx",)

    def __init__(self) -> None:
        self.ctx = _lib.lib.tp_ctx_create()
        if not self.ctx:
            raise MemoryError("tensorplay: tp_ctx_create failed (out of memory)")

    def __del__(self) -> None:
        try:
            _lib.lib.tp_ctx_destroy(self.ctx)
        except Exception:  # interpreter shutdown
            pass


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.captures: List[Capture] = []
        self.eager: Optional[_EagerCtx] = None


_state = _ThreadState()


def current() -> Tuple[int, Optional[Capture]]:
    """(ctx, capture): the innermost running compiled body's ctx, else the eager ctx."""
    captures = _state.captures
    if captures:
        capture = captures[-1]
        return capture.ctx, capture
    eager = _state.eager
    if eager is None:
        eager = _state.eager = _EagerCtx()
    return eager.ctx, None


def push(ctx: int) -> Capture:
    """Starts a compiled body's run on this thread with the ctx the C frontend gave it."""
    capture = Capture(ctx)
    _state.captures.append(capture)
    return capture


def pop(capture: Capture) -> None:
    """Ends the run: the Tensors it made stay valid (they hold references) but
    no longer belong to its ctx."""
    _state.captures.remove(capture)
    for tensor in capture.wrappers:
        tensor._capture = None  # type: ignore[attr-defined]
    capture.wrappers.clear()
