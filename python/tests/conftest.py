"""Shared fixtures: the backend compiled tests run on, and a clean cache per test."""
import os

import pytest

import tensorplay as tp


def _compiled_backend() -> str:
    wanted = os.environ.get("TP_PY_TEST_BACKEND", "stax")
    usable = {b.name for b in tp.list_backends(all=True) if b.usable}
    return wanted if wanted in usable else "eager"


COMPILED_BACKEND = _compiled_backend()


@pytest.fixture(autouse=True)
def clean_compile_state():
    yield
    tp.reset()


@pytest.fixture
def backend() -> str:
    """The backend compiled tests use: TP_PY_TEST_BACKEND (default stax), else eager."""
    return COMPILED_BACKEND
