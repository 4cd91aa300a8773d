"""The exception tree: roots, built-in bases, keyword-only context attributes."""

from __future__ import annotations

import pytest

from sanctum import errors
from sanctum.errors import (
    AetherValidationError,
    DeltaTypeError,
    FileProblem,
    Interrupt,
    OracleConnectionError,
    OracleError,
    OracleResponseError,
    OracleTimeoutError,
    RecursionLimitError,
    RitualFileError,
    RitualValidationError,
    RouteError,
    SanctumError,
    SealError,
    SigilExecutionError,
    SigilJoinError,
    SigilTimeoutError,
    SpellCallParseError,
    SpellError,
    SpellExecutionError,
    SpellManifestError,
    StreamModeError,
    WardRejection,
)


def test_every_error_descends_from_sanctum_error_except_interrupt() -> None:
    classes = [
        v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, BaseException)
    ]
    for cls in classes:
        if cls is Interrupt:
            assert not issubclass(cls, SanctumError)
        else:
            assert issubclass(cls, SanctumError), cls


@pytest.mark.parametrize(
    ("cls", "base"),
    [
        (RouteError, ValueError),
        (DeltaTypeError, TypeError),
        (StreamModeError, ValueError),
        (SpellManifestError, ValueError),
        (SigilTimeoutError, SigilExecutionError),
        (OracleConnectionError, OracleError),
        (OracleTimeoutError, OracleError),
        (OracleResponseError, OracleError),
        (errors.OracleOutputError, OracleResponseError),
        (SpellExecutionError, SpellError),
        (SpellCallParseError, SpellError),
    ],
)
def test_builtin_and_family_bases(cls: type, base: type) -> None:
    assert issubclass(cls, base)


def test_context_attributes() -> None:
    assert RitualValidationError("m", sigils=["a", "b"]).sigils == ("a", "b")
    err = AetherValidationError("m", sigil="s", keys=["k"])
    assert (err.sigil, err.keys) == ("s", ("k",))
    route = RouteError("m", sigil="r", value=3)
    assert (route.sigil, route.value) == ("r", 3)
    delta = DeltaTypeError("m", sigil="s", returned="NoneType")
    assert (delta.sigil, delta.returned) == ("s", "NoneType")
    exe = SigilExecutionError("m", sigil="s", aether={"a": 1}, invocation_id="i")
    assert (exe.sigil, exe.aether, exe.invocation_id) == ("s", {"a": 1}, "i")
    tmo = SigilTimeoutError("m", sigil="s", timeout=0.5)
    assert (tmo.timeout, tmo.aether) == (0.5, {})
    rec = RecursionLimitError("m", invocation_id="i", sigil="s", limit=3)
    assert (rec.invocation_id, rec.sigil, rec.limit) == ("i", "s", 3)
    join = SigilJoinError("m", pending={"j": ["b", "a"]})
    assert join.pending == {"j": ["a", "b"]}
    assert WardRejection("why").reason == "why"
    assert str(WardRejection()) == "delta rejected by a Ward"
    seal = SealError("m", invocation_id="i", seal_id="s", location="/tmp/x")
    assert (seal.invocation_id, seal.seal_id, seal.location) == ("i", "s", "/tmp/x")
    pause = Interrupt("r", sigil="s", invocation_id="i", seal_id="x")
    assert (pause.reason, pause.sigil, pause.invocation_id, pause.seal_id) == ("r", "s", "i", "x")
    assert OracleTimeoutError("m", endpoint="e", timeout=2).timeout == 2
    resp = OracleResponseError("m", endpoint="e", status=404, body="nf")
    assert (resp.status, resp.body, resp.endpoint) == (404, "nf", "e")
    assert SpellExecutionError("m", spell="x").spell == "x"
    parse = SpellCallParseError("m", rejected=["raw"], rounds=2)
    assert (parse.rejected, parse.rounds) == (["raw"], 2)
    assert SpellManifestError("m", path="p").path == "p"


def test_context_attributes_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        SigilExecutionError("m", "s")  # type: ignore[misc]


def test_ritual_file_error_lists_problems() -> None:
    problems = [FileProblem("r.yaml", 3, 5, "bad key"), FileProblem("r.yaml", 9, 1, "worse")]
    err = RitualFileError(problems)
    assert str(err) == "r.yaml:3:5: bad key\nr.yaml:9:1: worse"
    assert (err.path, err.line, err.column) == ("r.yaml", 3, 5)
    with pytest.raises(ValueError, match="at least one"):
        RitualFileError([])
