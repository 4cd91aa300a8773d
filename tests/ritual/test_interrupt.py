"""interrupt() and the Interrupt signal."""

import pytest

from sanctum import Interrupt, SanctumError, interrupt


def test_interrupt_raises_with_reason() -> None:
    with pytest.raises(Interrupt) as info:
        interrupt("approve?")
    assert info.value.reason == "approve?"
    assert info.value.sigil is None
    assert not isinstance(info.value, SanctumError)  # a pause, not a failure


def test_default_reason_is_empty() -> None:
    with pytest.raises(Interrupt) as info:
        interrupt()
    assert info.value.reason == ""
