"""The public surface: every public name has a docstring and the library is the one asked for."""
import inspect
import os

import tensorplay as tp


def _public_members(cls):
    for attr, value in vars(cls).items():
        if not attr.startswith("_") and (callable(value) or isinstance(value, property)):
            yield f"{cls.__name__}.{attr}", value


def test_every_public_name_has_a_docstring():
    missing = []
    for name in tp.__all__:
        obj = getattr(tp, name)
        if isinstance(obj, (str, dict)):
            continue
        if not inspect.getdoc(obj):
            missing.append(name)
        if inspect.isclass(obj):
            missing += [member for member, value in _public_members(obj) if not inspect.getdoc(value)]
    missing += [f"ops.{n}" for n in tp.ops.__all__ if not getattr(tp.ops, n).__doc__]
    assert not missing, f"public names without a docstring: {missing}"


def test_library_comes_from_tensorplay_library_when_set():
    wanted = os.environ.get("TENSORPLAY_LIBRARY")
    if wanted:
        assert os.path.realpath(tp.library_path) == os.path.realpath(wanted)
    assert tp.__version__.count(".") == 2
