"""Every import path a program for the original engine used still resolves."""

from __future__ import annotations

import importlib

import pytest

import sanctum
from sanctum import errors

ROOT = [
    "END",
    "START",
    "AetherSchema",
    "AetherValidationError",
    "Codex",
    "Conduit",
    "Interrupt",
    "InvocationContext",
    "Oracle",
    "RecursionLimitError",
    "Rite",
    "Ritual",
    "RitualValidationError",
    "Seal",
    "SealError",
    "SigilExecutionError",
    "SigilJoinError",
    "SigilPolicy",
    "SigilTimeoutError",
    "Spell",
    "SpellCallParseError",
    "SpellExecutionError",
    "Tome",
    "Ward",
    "WardRejection",
    "__version__",
    "circle",
    "interrupt",
    "scatter",
    "spell",
    "summon",
]

SUBPACKAGES = {
    "sanctum.omens": ["TraceRecorder", "render_trace", "STREAM_MODES", "resolve_modes"],
    "sanctum.omens.tracing": ["TraceRecorder", "render_trace"],
    "sanctum.oracle": [
        "Message",
        "Oracle",
        "OracleResponse",
        "SpellCall",
        "ScriptedOracle",
        "PromptedSpellCalling",
        "OracleError",
        "OracleConnectionError",
        "OracleTimeoutError",
        "OracleResponseError",
    ],
    "sanctum.grimoire": [
        "RepairOutcome",
        "Spell",
        "SpellCallParseError",
        "SpellExecutionError",
        "Tome",
        "repair_spell_call",
        "spell",
        "summon",
    ],
    "sanctum.codex": ["Codex", "MemoryCodex", "Seal", "SealError", "SqliteCodex"],
    "sanctum.ritual.errors": [
        "RitualValidationError",
        "RecursionLimitError",
        "SigilExecutionError",
        "SigilJoinError",
        "SigilTimeoutError",
    ],
    "sanctum.aether.errors": ["AetherValidationError"],
    "sanctum.codex.errors": ["SealError"],
    "sanctum.grimoire.errors": ["SpellCallParseError", "SpellExecutionError"],
    "sanctum.oracle.errors": [
        "OracleError",
        "OracleConnectionError",
        "OracleTimeoutError",
        "OracleResponseError",
    ],
    "sanctum.wards.errors": ["WardRejection"],
    "sanctum.oracle.ollama": ["format_messages", "build_payload", "parse_chat_response"],
    "sanctum.oracle.openai_compat": [
        "format_messages",
        "build_payload",
        "parse_chat_completion",
        "parse_sse_delta",
        "parse_sse_line",
    ],
}


@pytest.mark.parametrize("name", ROOT)
def test_the_root_package_exposes(name: str) -> None:
    assert name in sanctum.__all__
    assert getattr(sanctum, name) is not None


def test_star_import_gives_the_original_names() -> None:
    namespace: dict[str, object] = {}
    exec("from sanctum import *", namespace)
    assert set(ROOT) - {"__version__"} <= set(namespace)


@pytest.mark.parametrize(("module", "name"), [(m, n) for m, ns in SUBPACKAGES.items() for n in ns])
def test_subpackages_expose(module: str, name: str) -> None:
    assert getattr(importlib.import_module(module), name) is not None


def test_aliases_are_the_same_objects_not_copies() -> None:
    from sanctum.codex.errors import SealError
    from sanctum.grimoire import Tome
    from sanctum.omens import TraceRecorder
    from sanctum.omens.tracing import render_trace
    from sanctum.oracle.errors import OracleError
    from sanctum.ritual.errors import SigilExecutionError
    from sanctum.tracing import TraceRecorder as Recorder
    from sanctum.tracing import render_trace as render
    from sanctum.wards.errors import WardRejection

    assert SealError is errors.SealError is sanctum.SealError
    assert SigilExecutionError is errors.SigilExecutionError
    assert OracleError is errors.OracleError
    assert WardRejection is errors.WardRejection
    assert TraceRecorder is Recorder
    assert render_trace is render
    assert Tome is sanctum.Tome


def test_an_original_except_clause_catches_sanctum_failures() -> None:
    from sanctum import Ritual
    from sanctum.ritual.errors import RitualValidationError

    with pytest.raises(RitualValidationError):
        Ritual().compile()
