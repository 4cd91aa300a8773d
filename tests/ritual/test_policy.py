"""SigilPolicy and exponential_backoff."""

from __future__ import annotations

import pytest

from sanctum import SigilExecutionError, SigilPolicy, exponential_backoff
from sanctum.ritual.policy import failure_chain, failure_matches


def test_defaults() -> None:
    policy = SigilPolicy()
    assert policy.timeout is None
    assert policy.retries == 0
    assert policy.retry_on == (Exception,)
    assert policy.on_error is None
    assert 0.05 <= policy.backoff(1) <= 0.1  # exponential with jitter, base 0.1 s


def test_exponential_backoff_without_jitter_doubles_up_to_cap() -> None:
    backoff = exponential_backoff(base=0.1, cap=0.5, jitter=False)
    assert [backoff(n) for n in (1, 2, 3, 4, 5)] == pytest.approx([0.1, 0.2, 0.4, 0.5, 0.5])
    assert backoff(10_000) == 0.5


def test_exponential_backoff_jitter_scales_between_half_and_full() -> None:
    backoff = exponential_backoff(base=1.0, cap=100.0, jitter=True)
    samples = [backoff(3) for _ in range(200)]
    assert all(2.0 <= s <= 4.0 for s in samples)
    assert len(set(samples)) > 1


def test_exponential_backoff_rejects_negative_values() -> None:
    with pytest.raises(ValueError, match="base"):
        exponential_backoff(base=-1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"timeout": 0},
        {"timeout": -1.0},
        {"retries": -1},
        {"retries": 1.5},
        {"backoff": 3},
        {"retry_on": (int,)},
        {"on_error": ""},
    ],
)
def test_invalid_policies_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="SigilPolicy"):
        SigilPolicy(**kwargs)  # type: ignore[arg-type]


def test_retry_on_accepts_a_single_class_and_policy_is_frozen() -> None:
    policy = SigilPolicy(retry_on=KeyError)  # type: ignore[arg-type]
    assert policy.retry_on == (KeyError,)
    with pytest.raises(AttributeError):
        policy.retries = 3  # type: ignore[misc]


def test_failure_chain_walks_sigil_execution_errors_down_to_the_original() -> None:
    original = ConnectionError("refused")
    inner = SigilExecutionError("inner sigil failed", sigil="fetch")
    inner.__cause__ = original
    outer = SigilExecutionError("circle failed", sigil="research")
    outer.__cause__ = inner
    assert list(failure_chain(outer)) == [outer, inner, original]
    assert failure_matches(outer, (ConnectionError,))
    assert failure_matches(outer, (SigilExecutionError,))
    assert not failure_matches(outer, (KeyError,))


def test_failure_chain_stops_at_plain_exceptions_and_cycles() -> None:
    plain = ValueError("bad")
    plain.__cause__ = ConnectionError("hidden")  # not looked through: not a Sigil failure
    assert list(failure_chain(plain)) == [plain]
    assert not failure_matches(plain, (ConnectionError,))
    looped = SigilExecutionError("loop", sigil="a")
    looped.__cause__ = looped
    assert list(failure_chain(looped)) == [looped]
