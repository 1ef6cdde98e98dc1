"""The backend registry: listing, describing, choosing the default, adding INI files."""
from __future__ import annotations

import os
from ctypes import POINTER, byref, c_int, sizeof
from dataclasses import dataclass, field
from typing import List, Optional, Tuple, Union

from . import _errors, _lib

lib = _lib.lib
_SOURCES = {0: "registered", 1: "builtin", 2: "ini"}


@dataclass(frozen=True)
class Backend:
    """What the registry knows about one backend (a snapshot of tp_backend_info).

    ``status`` is "available", "unavailable", "loaded", "failed" or
    "shadowed"; ``reason`` says why when it is not usable ("" otherwise).
    ``priority`` ranks backends for ``auto``; ``contract``/``min_contract`` are
    the revisions the INI declares, ``revision`` the negotiated one once loaded.
    """

    name: str
    status: str
    reason: str
    source: str
    description: str
    tags: Tuple[str, ...]
    file: str
    line: int
    library: str
    entry: str
    contract: int
    version: str
    priority: int = 10
    min_contract: int = 0
    revision: int = 0
    requires: Tuple[Tuple[str, Optional[str]], ...] = field(default=())
    warnings: Tuple[str, ...] = field(default=())

    @property
    def usable(self) -> bool:
        """True when the backend is loaded or can be loaded."""
        return self.status in ("available", "loaded")


def _text(value: Optional[bytes]) -> str:
    return value.decode(errors="replace") if value else ""


def _record(info: _lib.BackendInfo) -> Backend:
    requires = tuple((_text(info.requires[i]),
                      _text(info.requires_found[i]) if info.requires_found[i] else None)
                     for i in range(info.num_requires))
    return Backend(
        name=_text(info.name), status=_text(lib.tp_backend_state_name(info.state)),
        reason=_text(info.reason), source=_SOURCES.get(info.source, "?"),
        description=_text(info.description),
        tags=tuple(t for t in _text(info.tags).split(",") if t), file=_text(info.file),
        line=info.line, library=_text(info.library), entry=_text(info.entry),
        contract=info.contract, version=_text(info.version), priority=info.priority,
        min_contract=info.min_contract, revision=info.revision, requires=requires,
        warnings=tuple(_text(info.warnings[i]) for i in range(info.num_warnings)))


def list_backends(all: bool = False) -> List[Backend]:
    """The backends the registry knows, in name order, without loading any.

    By default only usable backends not tagged debug or experimental;
    ``all=True`` also lists those, the unavailable and failed ones (with
    their reason) and claims shadowed by an earlier source.
    """
    options = _lib.BackendListOptions(struct_size=sizeof(_lib.BackendListOptions),
                                      exclude_tags=b"" if all else None,
                                      include_unavailable=all, include_shadowed=all)
    infos = POINTER(_lib.BackendInfo)()
    count = c_int()
    _errors.check(lib.tp_backend_list(byref(options), byref(infos), byref(count)))
    try:
        return [_record(infos[i]) for i in range(count.value)]
    finally:
        lib.tp_backend_info_release(infos, count.value)


def backend_info(name: str) -> Backend:
    """The record of backend `name` (not loading it); InvalidBackend with suggestions if unknown."""
    info = POINTER(_lib.BackendInfo)()
    status = lib.tp_backend_info_get(name.encode(), byref(info))
    if status:
        raise _errors.last_error(status)
    try:
        return _record(info[0])
    finally:
        lib.tp_backend_info_release(info, 1)


def get_default_backend() -> str:
    """The default backend's name (set_default_backend, else TP_DEFAULT_BACKEND, else "stax")."""
    return _text(lib.tp_backend_get_default())


def set_default_backend(name: Optional[str]) -> None:
    """Makes `name` the default backend (looked up and loaded now; ``None`` restores "stax")."""
    _errors.check(lib.tp_backend_set_default(None if name is None else name.encode()))


def register_backend_library(ini_path: Union[str, os.PathLike]) -> List[Backend]:
    """Adds a backends INI file first on the search path and returns the backends it declares.

    The file is the same format as the files in backends.d (a [tensorplay]
    header and one section per backend naming its library). Raises
    FileError when it cannot be read and ParseError (naming FILE:LINE) when
    the registry refused or could not parse it.
    """
    path = os.path.realpath(os.fspath(ini_path))
    _errors.check(lib.tp_backend_register_file(os.fsencode(path)))
    return [b for b in list_backends(all=True) if b.file == path]
