"""Spells and the @spell inscription: schemas from type hints, casting, errors."""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal, Optional

import pytest

from sanctum.errors import SpellExecutionError
from sanctum.grimoire import Spell, infer_parameters, spell


@spell
def word_count(text: str) -> int:
    """Count the words in a text.

    Longer explanation that is not part of the description.
    """
    return len(text.split())


def test_bare_decorator_infers_name_description_and_parameters() -> None:
    assert isinstance(word_count, Spell)
    assert word_count.schema() == {
        "name": "word_count",
        "description": "Count the words in a text.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    }


def test_the_spell_stays_directly_callable() -> None:
    assert word_count("three little words") == 3
    assert word_count(text="a b") == 2


def test_decorator_with_arguments_overrides_name_and_description() -> None:
    @spell(name="shout", description="Say it louder.")
    def loud(text: str) -> str:
        """Ignored docstring."""
        return text.upper()

    assert loud.name == "shout"
    assert loud.description == "Say it louder."
    assert loud("hi") == "HI"


def test_defaults_become_optional_properties_with_their_default() -> None:
    @spell
    def greet(name: str, times: int = 1, polite: bool = True) -> str:
        """Greet someone."""
        return name * times

    assert greet.parameters["required"] == ["name"]
    assert greet.parameters["properties"]["times"] == {"type": "integer", "default": 1}
    assert greet.parameters["properties"]["polite"] == {"type": "boolean", "default": True}


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_type_hints_map_to_json_schema() -> None:
    def fn(
        a: Optional[int],  # noqa: UP045 - the spec names Optional explicitly
        b: list[str],
        c: dict[str, int],
        d: Literal["x", "y"],
        e: float | None = None,
        f: Colour = Colour.RED,
        g: Annotated[str, "the g value"] = "",
        h: Any = None,
        i: dict | None = None,  # type: ignore[assignment,type-arg]
        j: tuple[int, ...] = (),
        k: int | str = 0,
        *args: int,
        **kwargs: int,
    ) -> None:
        return None

    props = infer_parameters(fn)["properties"]
    assert props["a"] == {"type": ["integer", "null"]}
    assert props["b"] == {"type": "array", "items": {"type": "string"}}
    assert props["c"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["d"] == {"type": "string", "enum": ["x", "y"]}
    assert props["e"] == {"type": ["number", "null"], "default": None}
    assert props["f"] == {"type": "string", "enum": ["red", "blue"], "default": "red"}
    assert props["g"] == {"type": "string", "description": "the g value", "default": ""}
    assert props["h"] == {"default": None}
    assert props["i"] == {"type": ["object", "null"], "default": None}
    assert props["j"]["type"] == "array"
    assert props["j"]["items"] == {"type": "integer"}
    assert props["k"] == {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": 0}
    assert "args" not in props
    assert "kwargs" not in props
    assert infer_parameters(fn)["required"] == ["a", "b", "c", "d"]


def test_google_docstring_args_become_property_descriptions() -> None:
    @spell
    def find(query: str, limit: int = 3) -> list[str]:
        """Find things.

        Args:
            query: What to look for,
                in plain words.
            limit (int): At most this many.

        Returns:
            The things.
        """
        return []

    assert find.parameters["properties"]["query"]["description"] == (
        "What to look for, in plain words."
    )
    assert find.parameters["properties"]["limit"]["description"] == "At most this many."


def test_schema_is_a_copy() -> None:
    schema = word_count.schema()
    schema["parameters"]["properties"]["text"]["type"] = "integer"
    assert word_count.parameters["properties"]["text"] == {"type": "string"}


async def test_execute_sync_and_async_functions() -> None:
    @spell
    async def double(n: int) -> int:
        """Double it."""
        return n * 2

    assert await word_count.execute({"text": "a b c"}) == 3
    assert await double.execute({"n": 4}) == 8


async def test_execute_with_no_arguments() -> None:
    @spell
    def ping() -> str:
        """Ping."""
        return "pong"

    assert await ping.execute() == "pong"
    assert await ping.execute(None) == "pong"


async def test_execute_wraps_failures_with_the_cause_chained() -> None:
    @spell
    async def explode(n: int) -> int:
        """Fail loudly."""
        raise KeyError(n)

    with pytest.raises(SpellExecutionError) as caught:
        await explode.execute({"n": 1})
    assert isinstance(caught.value.__cause__, KeyError)
    assert caught.value.spell == "explode"
    assert "explode" in str(caught.value)


async def test_execute_with_wrong_arguments_is_a_spell_execution_error() -> None:
    with pytest.raises(SpellExecutionError) as caught:
        await word_count.execute({"words": "x"})
    assert isinstance(caught.value.__cause__, TypeError)


def test_spell_refuses_non_callables_and_nameless_lambdas() -> None:
    with pytest.raises(TypeError):
        spell(42)  # type: ignore[call-overload]
    with pytest.raises(ValueError):
        spell(lambda: None)
    assert spell(lambda: None, name="noop").name == "noop"


def test_respelling_a_spell_renames_it_without_losing_its_function() -> None:
    renamed = spell(word_count, name="count_words")
    assert renamed.name == "count_words"
    assert renamed.description == word_count.description
    assert renamed("a b") == 2


def test_unresolvable_hints_fall_back_to_any() -> None:
    def fn(x: NotDefinedAnywhere) -> None:  # type: ignore[name-defined]  # noqa: F821
        return None

    fn.__annotations__ = {"x": "NotDefinedAnywhere"}
    assert infer_parameters(fn) == {"type": "object", "properties": {"x": {}}, "required": ["x"]}


async def test_enum_parameters_get_members_and_their_default_in_the_schema() -> None:
    import enum as enum_module

    class Colour(enum_module.Enum):
        RED = "red"
        BLUE = "blue"

    @spell
    def paint(c: Colour = Colour.RED, d: Colour | None = None) -> str:
        """Paint."""
        return f"{c.value}/{d.value if d else '-'}"

    properties = paint.parameters["properties"]
    assert properties["c"]["default"] == "red"
    assert properties["c"]["enum"] == ["red", "blue"]
    assert await paint.execute({"c": "blue", "d": "red"}) == "blue/red"
    assert await paint.execute({}) == "red/-"
