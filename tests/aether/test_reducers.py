"""Built-in reducers: pure merge functions that never mutate their inputs."""

from __future__ import annotations

import pytest

from sanctum.aether import add, append, merge_dict, overwrite


def test_overwrite() -> None:
    assert overwrite([1], [2]) == [2]


def test_append_concatenates_without_mutation() -> None:
    current, update = [1, 2], [3]
    result = append(current, update)
    assert result == [1, 2, 3]
    assert current == [1, 2]
    assert update == [3]
    assert result is not current
    assert append((1,), (2,)) == [1, 2]


@pytest.mark.parametrize(("current", "update"), [([1], 2), ([1], "ab"), (5, [1])])
def test_append_rejects_non_lists(current: object, update: object) -> None:
    with pytest.raises(TypeError, match="append"):
        append(current, update)


def test_add() -> None:
    assert add(2, 3) == 5
    assert add(0.5, 0.25) == 0.75


def test_merge_dict_shallow_without_mutation() -> None:
    current, update = {"a": 1, "b": {"x": 1}}, {"b": {"y": 2}, "c": 3}
    result = merge_dict(current, update)
    assert result == {"a": 1, "b": {"y": 2}, "c": 3}
    assert current == {"a": 1, "b": {"x": 1}}
    with pytest.raises(TypeError, match="merge_dict"):
        merge_dict({"a": 1}, [1])


def test_append_records_what_it_appended_to() -> None:
    from sanctum.aether.reducers import appended_from

    base = [{"role": "user"}]
    grown = append(base, [{"role": "assistant"}])
    origin = appended_from(grown)
    assert origin is not None
    assert origin[0] is base
    assert origin[1] == 1
    assert appended_from(list(grown)) is None  # an equal list built elsewhere
    assert appended_from(base) is None


def test_append_provenance_forgets_old_results() -> None:
    from sanctum.aether.reducers import appended_from

    first = append([], [1])
    for _ in range(100):
        append([], [2])
    assert appended_from(first) is None
