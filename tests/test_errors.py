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


def test_a_validation_error_from_a_message_alone_has_one_problem() -> None:
    err = RitualValidationError("m", sigils=["a"])
    assert (str(err), err.code, err.sigils) == ("m", errors.ErrorCode.INVALID_RITUAL, ("a",))
    assert err.problems == (
        errors.GraphProblem(errors.ErrorCode.INVALID_RITUAL, "m", sigils=("a",)),
    )
    coded = RitualValidationError(
        "m", code=errors.ErrorCode.UNKNOWN_TARGET, source="a", target="b", sigils=["a", "b"]
    )
    assert (coded.code, coded.source, coded.target, coded.sigil) == (
        "unknown-target",
        "a",
        "b",
        None,
    )


def test_a_validation_error_carries_every_problem() -> None:
    first = errors.GraphProblem(errors.ErrorCode.NO_ENTRY, "no entry")
    second = errors.GraphProblem(errors.ErrorCode.DEAD_END, "dead", sigils=("a",))
    err = RitualValidationError(problems=[first, second])
    assert (str(err), err.code, err.problems) == ("no entry", "no-entry", (first, second))


def test_every_code_is_drawn_in_the_tree() -> None:
    assert errors.__doc__ is not None
    for code in errors.ErrorCode:
        prefix = code.value.split("-")[0]
        assert code.value in errors.__doc__ or f"{prefix}-*" in errors.__doc__, code


def test_a_recursion_limit_is_worded_from_its_fields() -> None:
    err = RecursionLimitError(invocation_id="i", sigil="s", limit=3)
    assert err.code == errors.ErrorCode.RECURSION_LIMIT
    assert str(err) == (
        "invocation 'i' reached the recursion limit of 3 supersteps in this run without "
        "reaching END; last sigil executed: 's'. Check the cycle's stop condition, or raise "
        "compile(recursion_limit=...)"
    )
    inner = RecursionLimitError(
        invocation_id="i", sigil="s", limit=3, circle="c", resumed_from="x", superstep=10
    )
    assert inner.worded("Raise `recursion_limit:`.") == (
        "the inner run 'i' of circle 'c' reached the recursion limit of 3 supersteps in this "
        "resume (from seal 'x', superstep 7, to superstep 10) without reaching END; last "
        "sigil executed: 's'. Raise `recursion_limit:`."
    )
    assert str(RecursionLimitError("kept", limit=3)) == "kept"
    assert str(RecursionLimitError()) == ""


def test_the_engine_limit_message_is_the_worded_one() -> None:
    from sanctum import Ritual

    ritual = Ritual().add_sigil("a", lambda aether: {}).set_entry_point("a").add_edge("a", "a")
    with pytest.raises(RecursionLimitError) as caught:
        ritual.compile(recursion_limit=2).invoke({}, invocation_id="run")
    err = caught.value
    assert (err.invocation_id, err.sigil, err.limit) == ("run", "a", 2)
    assert str(err) == err.worded(RecursionLimitError.advice)


def test_agent_oracle_errors_sit_in_the_tree_with_their_codes() -> None:
    import sanctum
    from sanctum.oracle.classify import ContextOverflowError as FromClassify
    from sanctum.oracle.fallback import OracleChainExhausted as FromFallback

    exhausted = errors.OracleChainExhausted("all failed", attempts=[{"oracle": "a"}])
    assert isinstance(exhausted, OracleError)
    assert (exhausted.code, exhausted.attempts) == ("oracle-chain-exhausted", ({"oracle": "a"},))
    overflow = errors.ContextOverflowError("too long", status=400, window=2048, estimate=2300)
    assert isinstance(overflow, OracleResponseError)
    assert (overflow.code, overflow.window, overflow.estimate) == ("context-overflow", 2048, 2300)
    assert FromFallback is errors.OracleChainExhausted is sanctum.OracleChainExhausted
    assert FromClassify is errors.ContextOverflowError is sanctum.ContextOverflowError
    assert errors.__doc__ is not None
    assert "OracleChainExhausted" in errors.__doc__
    assert "ContextOverflowError" in errors.__doc__
