"""STREAM_MODES and resolve_modes."""

from __future__ import annotations

import pytest

from sanctum.errors import StreamModeError
from sanctum.omens import (
    STREAM_MODES,
    RiteBegan,
    SigilCompleted,
    SuperstepCompleted,
    TokenEmitted,
    resolve_modes,
)


def test_single_and_combined_modes() -> None:
    assert resolve_modes("updates") == {SigilCompleted}
    assert resolve_modes(["values", "tokens"]) == {SuperstepCompleted, TokenEmitted}
    assert RiteBegan in resolve_modes({"omens"})
    assert set(STREAM_MODES) == {"updates", "values", "omens", "tokens", "agent"}


@pytest.mark.parametrize("mode", ["bogus", [], ["updates", "nope"], [None]])
def test_unknown_or_empty_modes_raise_value_error(mode: object) -> None:
    with pytest.raises(ValueError) as info:
        resolve_modes(mode)  # type: ignore[arg-type]
    assert isinstance(info.value, StreamModeError)


@pytest.mark.parametrize(
    ("mode", "wrong"),
    [
        (None, "not NoneType None"),
        (5, "not int 5"),
        (b"updates", "not bytes b'updates'"),
        ([5], "a stream mode must be a mode name (str), not int 5"),
        ([["updates"]], "not list ['updates']"),
        (("updates", None), "not NoneType None"),
    ],
)
def test_a_mode_that_is_not_names_is_a_stream_mode_error_naming_the_modes(
    mode: object, wrong: str
) -> None:
    with pytest.raises(StreamModeError) as info:
        resolve_modes(mode)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert wrong in message
    assert message.endswith("choose from 'updates', 'values', 'tokens', 'omens', 'agent'")


def test_a_long_wrong_mode_is_cut_in_the_message() -> None:
    with pytest.raises(StreamModeError) as info:
        resolve_modes([list(range(1000))])  # type: ignore[list-item]
    assert len(str(info.value)) < 200
    assert "…" in str(info.value)


def test_astream_refuses_a_mode_that_is_not_names_before_running() -> None:
    from sanctum import END, START, Ritual

    ran: list[int] = []
    ritual = Ritual().add_sigil("s", lambda a: ran.append(1) or {})  # type: ignore[func-returns-value]
    rite = ritual.add_edge(START, "s").add_edge("s", END).compile()
    for mode in (None, 5):
        with pytest.raises(StreamModeError, match="stream mode must be a mode name"):
            rite.astream({}, mode=mode)  # type: ignore[arg-type]
    assert ran == []


def test_the_omens_mode_is_the_documented_lifecycle_without_superstep_ends_or_tokens() -> None:
    names = {cls.__name__ for cls in STREAM_MODES["omens"]}
    assert names == {
        "RiteBegan",
        "SuperstepBegan",
        "SigilBegan",
        "SigilRetried",
        "SigilCompleted",
        "SealWritten",
        "RiteManifested",
        "SpellCallRepaired",
        "SpellCallRejected",
        "DeltaRejected",
        "CircleEchoed",
    }


def test_stream_modes_are_built_from_each_omen_class_s_own_mode() -> None:
    from sanctum.omens import (
        ApprovalRequested,
        CircleEchoed,
        CompactionStalled,
        DeltaRejected,
        LoopGuardTripped,
        OracleFellBack,
        SealWritten,
        SigilBegan,
        SigilRetried,
        SpellCallRejected,
        SpellCallRepaired,
        SuperstepBegan,
        TranscriptCompacted,
        TurnBudgetReached,
    )
    from sanctum.omens.events import OMEN_KINDS, RiteManifested

    # The value the API reference documents, order included.
    documented = {
        "updates": (SigilCompleted,),
        "values": (SuperstepCompleted,),
        "tokens": (TokenEmitted,),
        "omens": (
            RiteBegan,
            SuperstepBegan,
            SigilBegan,
            SigilRetried,
            SigilCompleted,
            SealWritten,
            RiteManifested,
            SpellCallRepaired,
            SpellCallRejected,
            DeltaRejected,
            CircleEchoed,
        ),
        "agent": (
            OracleFellBack,
            TranscriptCompacted,
            CompactionStalled,
            TurnBudgetReached,
            LoopGuardTripped,
            ApprovalRequested,
        ),
    }
    assert list(STREAM_MODES.items()) == list(documented.items())
    for kind in OMEN_KINDS:
        declared = {kind.mode, *kind.also_in}
        assert declared <= set(STREAM_MODES), kind
        assert declared == {name for name, kinds in STREAM_MODES.items() if kind in kinds}


def test_an_omen_class_a_program_defines_is_yielded_by_no_mode() -> None:
    import dataclasses

    from sanctum.omens import Omen

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Mine(Omen):
        note: str = ""

    assert Mine.mode == ""
    assert all(Mine not in kinds for kinds in STREAM_MODES.values())


def test_a_misspelt_mode_on_an_omen_class_is_refused_when_the_class_is_made() -> None:
    import dataclasses

    from sanctum.omens import Omen
    from sanctum.omens.events import _streamed

    with pytest.raises(TypeError, match="Typo declares unknown stream mode 'omen'"):

        @_streamed
        @dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
        class Typo(Omen):
            mode = "omen"


def test_modes_and_events_import_each_other_in_one_direction_only() -> None:
    import ast
    import inspect

    from sanctum.omens import events

    tree = ast.parse(inspect.getsource(events))
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module is not None
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert "sanctum.omens.modes" not in imported
    assert not any(name == "sanctum.omens" for name in imported)
