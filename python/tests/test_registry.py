"""The backend registry from Python: records with status and reason, lookup
errors with suggestions, the default backend, and INI files added at run time."""
import os

import numpy as np
import pytest

import tensorplay as tp


def test_list_backends_returns_records_with_status():
    usable = tp.list_backends()
    assert usable, "no usable backend at all"
    assert all(b.status in ("available", "loaded") for b in usable)
    assert all(isinstance(b, tp.Backend) for b in usable)
    names = [b.name for b in tp.list_backends(all=True)]
    assert "eager" in names  # the built-in, tagged debug: only listed with all=True
    assert "eager" not in [b.name for b in usable]
    assert names == sorted(names) or len(set(names)) < len(names)  # name order (shadowed after)


def test_unusable_backends_carry_their_reason():
    for record in tp.list_backends(all=True):
        if record.status in ("unavailable", "failed"):
            assert record.reason, f"{record.name} is {record.status} without a reason"


def test_backend_info_of_eager():
    info = tp.backend_info("eager")
    assert info.source == "builtin"
    assert "debug" in info.tags


def test_backend_info_of_an_unknown_name_suggests():
    with pytest.raises(tp.InvalidBackend, match="did you mean: 'eager'"):
        tp.backend_info("eagr")


def test_set_default_backend_changes_what_compile_uses():
    before = tp.get_default_backend()
    try:
        tp.set_default_backend("eager")
        assert tp.get_default_backend() == "eager"
        compiled = tp.compile(lambda x: x + 1.0)
        np.testing.assert_allclose(compiled(np.zeros(2, np.float32)).numpy(), [1, 1])
        with pytest.raises(tp.InvalidBackend):
            tp.set_default_backend("no_such_backend")
    finally:
        tp.set_default_backend(None if before == "stax" else before)


def test_register_backend_library_adds_an_ini_file(tmp_path):
    build = os.path.dirname(os.path.realpath(tp.library_path))
    fixture = os.path.join(build, "tests", "registry", "fixtures", "fixture_good.so")
    if not os.path.exists(fixture):
        pytest.skip("needs the registry test fixtures of a TensorPlay build tree")
    ini = tmp_path / "mine.ini"
    ini.write_text("[tensorplay]\nformat = 1\n\n[good]\n"
                   f"library = {fixture}\nentry = tp_fixture_backend\ncontract = 1\n"
                   "description = registered from Python\n")
    declared = tp.register_backend_library(ini)
    assert [(b.name, b.status) for b in declared] == [("good", "available")]
    info = tp.backend_info("good")
    assert info.description == "registered from Python"
    assert info.file == str(ini.resolve())


def test_register_backend_library_reports_a_missing_library(tmp_path):
    ini = tmp_path / "gone.ini"
    ini.write_text("[tensorplay]\nformat = 1\n\n[gone]\nlibrary = /nonexistent/gone.so\n"
                   "entry = tp_gone_backend\ncontract = 1\n")
    declared = tp.register_backend_library(ini)
    assert declared[0].status == "unavailable"
    assert "/nonexistent/gone.so" in declared[0].reason


def test_register_backend_library_errors_name_the_file(tmp_path):
    with pytest.raises(tp.FileError, match="missing.ini"):
        tp.register_backend_library(tmp_path / "missing.ini")
    broken = tmp_path / "broken.ini"
    broken.write_text("[tensorplay]\nformat = 1\n[unclosed\n")
    with pytest.raises(tp.ParseError, match="broken.ini:3"):
        tp.register_backend_library(broken)


def test_records_carry_the_priority_the_c_registry_reports():
    # Independent of the bindings' struct layout: the in-tree INI ranks stax 100, eager is 0.
    assert tp.backend_info("eager").priority == 0
    names = {b.name: b for b in tp.list_backends(all=True)}
    if "stax" in names and names["stax"].source == "ini":
        assert names["stax"].priority == 100
