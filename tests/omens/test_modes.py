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
    assert set(STREAM_MODES) == {"updates", "values", "omens", "tokens"}


@pytest.mark.parametrize("mode", ["bogus", [], ["updates", "nope"], [None]])
def test_unknown_or_empty_modes_raise_value_error(mode: object) -> None:
    with pytest.raises(ValueError) as info:
        resolve_modes(mode)  # type: ignore[arg-type]
    assert isinstance(info.value, StreamModeError)
