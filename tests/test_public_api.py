"""Every ``__all__`` in sanctum is exhaustive and sorted (ruff's isort-style order)."""

from __future__ import annotations

import importlib
import pkgutil
import re
import types
import warnings

import pytest

import sanctum

# Packages whose __init__ pulls in third-party libraries are checked where importable.
# Walking imports every package, the deprecated sanctum.spec shim too: its warning is
# expected here (tests/ritualfile checks it is given).
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "sanctum.spec was renamed", DeprecationWarning)
    _PACKAGES = sorted(
        name
        for _finder, name, is_pkg in pkgutil.walk_packages(sanctum.__path__, "sanctum.")
        if is_pkg
    )


def _isort_key(name: str) -> tuple[int, str]:
    if re.fullmatch(r"[A-Z0-9_]+", name.strip("_")) and len(name.strip("_")) > 1:
        group = 0  # SCREAMING_SNAKE_CASE
    elif name[:1].isupper():
        group = 1  # CamelCase
    else:
        group = 2
    return group, name


def _public(module: types.ModuleType) -> list[str]:
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "annotations"
    ]


# Modules that exist for programs written against the original engine (0.4): each
# re-exports names from elsewhere, and each must list all of them.
_COMPAT_MODULES = [
    "sanctum.aether.errors",
    "sanctum.codex.errors",
    "sanctum.grimoire.errors",
    "sanctum.omens.tracing",
    "sanctum.oracle.errors",
    "sanctum.ritual.errors",
    "sanctum.wards.errors",
]


@pytest.mark.parametrize("name", ["sanctum", *_PACKAGES, *_COMPAT_MODULES])
def test_all_is_exhaustive_and_sorted(name: str) -> None:
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    exported = list(module.__all__)
    dunder = [n for n in exported if n.startswith("__")]
    plain = [n for n in exported if not n.startswith("__")]
    assert plain == sorted(plain, key=_isort_key), f"{name}.__all__ is not sorted"
    # Resolve every name first: ``sanctum`` itself imports its exports lazily (PEP 562).
    for member in exported:
        assert hasattr(module, member), f"{name}.__all__ names missing {member}"
    assert sorted(set(_public(module))) == sorted(plain), f"{name}.__all__ is not exhaustive"
    assert set(dunder) <= {"__version__"}


def test_engine_surface() -> None:
    from sanctum import (  # noqa: F401
        END,
        START,
        AetherSchema,
        Conduit,
        Interrupt,
        Rite,
        Ritual,
        SigilPolicy,
        circle,
        exponential_backoff,
        interrupt,
        scatter,
    )

    assert START == "__start__"
    assert END == "__end__"


def test_every_error_class_is_exported_from_sanctum() -> None:
    from sanctum import errors

    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            assert getattr(sanctum, name) is value
