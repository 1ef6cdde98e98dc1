"""Exceptions: one class per tp_status, each carrying the C library's message."""
from __future__ import annotations

from typing import Dict, Type

from . import _lib


class TensorPlayError(Exception):
    """Base of every error raised by tensorplay; ``status`` is the C status name."""

    status: str = "internal"

    def __init__(self, message: str, status: str = "") -> None:
        super().__init__(message)
        self.message = message
        if status:
            self.status = status


class InvalidArgument(TensorPlayError, ValueError):
    """A parameter value is out of its domain (TP_ERR_INVALID_ARGUMENT)."""
    status = "invalid_argument"


class ShapeError(TensorPlayError, ValueError):
    """Shapes do not fit the operation (TP_ERR_SHAPE)."""
    status = "shape"


class DTypeError(TensorPlayError, TypeError):
    """A dtype the operation does not accept (TP_ERR_DTYPE)."""
    status = "dtype"


class OutOfMemory(TensorPlayError, MemoryError):
    """An allocation failed (TP_ERR_OUT_OF_MEMORY)."""
    status = "out_of_memory"


class FileError(TensorPlayError, OSError):
    """A file could not be read or written (TP_ERR_IO)."""
    status = "io"


class ParseError(TensorPlayError, ValueError):
    """Malformed text or file format (TP_ERR_PARSE)."""
    status = "parse"


class InvalidGraph(TensorPlayError, ValueError):
    """The graph does not verify (TP_ERR_INVALID_GRAPH)."""
    status = "invalid_graph"


class NotFound(TensorPlayError, LookupError):
    """A name (op, backend, value, file) is unknown (TP_ERR_NOT_FOUND)."""
    status = "not_found"


class InvalidBackend(NotFound):
    """An unknown backend name; the message carries the "did you mean" suggestions."""


class Unsupported(TensorPlayError, NotImplementedError):
    """A valid request this build or backend cannot do (TP_ERR_UNSUPPORTED)."""
    status = "unsupported"


class UnsupportedFormat(Unsupported):
    """A model file format this build of the C library cannot read; the message names the build option."""


class BackendError(TensorPlayError, RuntimeError):
    """A backend failed to load, compile or run (TP_ERR_BACKEND)."""
    status = "backend"


class StateError(TensorPlayError, RuntimeError):
    """The call is not valid in the object's state (TP_ERR_STATE)."""
    status = "state"


class InternalError(TensorPlayError, RuntimeError):
    """A bug in TensorPlay (TP_ERR_INTERNAL): please report it."""
    status = "internal"


class CompileOutputCountError(TensorPlayError, TypeError):
    """A compiled function returned a different number of tensors than its first capture."""
    status = "invalid_argument"


_BY_STATUS: Dict[int, Type[TensorPlayError]] = {
    1: InvalidArgument, 2: ShapeError, 3: DTypeError, 4: OutOfMemory, 5: FileError,
    6: ParseError, 7: InvalidGraph, 8: NotFound, 9: Unsupported, 10: BackendError,
    11: StateError, 12: InternalError,
}


def error_for(status: int, message: str) -> TensorPlayError:
    """The exception for a C status and message (InvalidBackend for unknown backend names)."""
    cls = _BY_STATUS.get(status, InternalError)
    if cls is NotFound and message.startswith("Invalid backend"):
        cls = InvalidBackend
    name = (_lib.lib.tp_status_name(status) or b"internal").decode()
    return cls(message, name)


def last_error(status: int) -> TensorPlayError:
    """The exception for `status` with the calling thread's tp_last_error() message."""
    return error_for(status, _lib.lib.tp_last_error().decode(errors="replace"))


def check(status: int) -> None:
    """Raises the thread's last error when `status` is not TP_OK."""
    if status:
        raise last_error(status)
