"""The strict composer under the loader: YAML 1.2 core scalars, no anchors, no tags.

PyYAML's safe event parser (libyaml's when present) under its composer, refusing
aliases, anchors and tags as it goes and nesting deeper than :data:`MAX_DEPTH`; plain
scalars resolve by the YAML 1.2 core schema (:func:`core_scalar`). How messages name
the document read (a ritual file, an input file, a test file) is :class:`Words`.
:mod:`sanctum.ritualfile.loader` builds plain data from what this composes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import yaml
import yaml.composer
import yaml.resolver
from yaml.events import AliasEvent, CollectionStartEvent, ScalarEvent
from yaml.nodes import Node, ScalarNode

__all__ = [
    "MAX_DEPTH",
    "NULL_WORDS",
    "YAML11_BOOLEANS",
    "Abort",
    "Position",
    "StrictComposer",
    "Words",
    "YamlPath",
    "block_starts",
    "core_scalar",
    "drops_digits",
    "words_for",
]

MAX_DEPTH = 64
"""Deepest nesting of mappings and sequences accepted."""

YAML11_BOOLEANS = frozenset(
    [
        "y",
        "Y",
        "yes",
        "Yes",
        "YES",
        "n",
        "N",
        "no",
        "No",
        "NO",
        "true",
        "True",
        "TRUE",
        "false",
        "False",
        "FALSE",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
    ]
)
"""Plain scalars a YAML 1.1 reader turns into booleans."""

YamlPath = tuple[str | int, ...]
"""Where a value sits in the document: mapping keys and sequence indexes."""

Position = tuple[int, int]
"""A 1-based ``(line, column)``."""

NULL_WORDS = frozenset({"~", "null", "Null", "NULL", ""})
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_INT = re.compile(r"[-+]?[0-9]+\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(nan|NaN|NAN)\Z")


@dataclass(frozen=True)
class Words:
    """How messages name the document being read (a ritual file, an input file, ...)."""

    noun: str
    alias_fix: str
    anchor_fix: str
    merge_fix: str
    empty: str
    too_big: str
    documents: str
    finite: bool = False
    """Refuse ``.nan`` and ``.inf`` (ritual and test files: nothing in them needs one)."""

    @property
    def plural(self) -> str:
        return f"{self.noun}s"


def words_for(what: str) -> Words:
    if what == "ritual file":
        return Words(
            noun=what,
            alias_fix="repeat the value, or use default_policy / named policies for reuse",
            anchor_fix="use default_policy / named policies for reuse",
            merge_fix="use default_policy / named policies for reuse",
            empty="file is empty; a ritual file starts with `sanctum: 1`",
            too_big=" — split it with circle sigils",
            documents="several YAML documents in one file; a ritual file holds exactly one",
            finite=True,
        )
    empty = f"the {what} is empty; write one YAML or JSON document (e.g. `name: Ada`)"
    if what == "test file":
        empty = "the test file is empty; write `ritual: NAME.yaml` and a list of `cases:`"
    return Words(
        noun=what,
        alias_fix="repeat the value",
        anchor_fix="remove the anchor and repeat the value where it is needed",
        merge_fix="write the keys out in full",
        empty=empty,
        too_big="",
        documents=f"several YAML documents in one {what}; it must hold exactly one",
        finite=what == "test file",
    )


class Abort(Exception):
    """A problem after which the document cannot be read further."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = message


_Parser: Any
try:  # libyaml's event parser, when PyYAML was built with it (about 5x faster)
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - pure-Python PyYAML
    _Parser = yaml.SafeLoader


class StrictComposer(yaml.composer.Composer, yaml.resolver.Resolver, _Parser):  # type: ignore[misc]
    """A safe event parser (libyaml when present) under PyYAML's composer.

    Refuses anchors, aliases and tags; no constructor ever runs.
    """

    def __init__(self, text: str, words: Words) -> None:
        _Parser.__init__(self, text)
        yaml.composer.Composer.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self.words = words
        self.refusals: list[tuple[int, int, str]] = []
        self.depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        event: Any = self.peek_event()
        line, column = event.start_mark.line + 1, event.start_mark.column + 1
        if isinstance(event, AliasEvent):
            self.get_event()
            self.refusals.append(
                (
                    line,
                    column,
                    f"aliases (*{event.anchor}) are not allowed in {self.words.plural}; "
                    + self.words.alias_fix,
                )
            )
            return ScalarNode(
                "tag:yaml.org,2002:null",
                "",
                event.start_mark,  # type: ignore[arg-type]
                event.end_mark,  # type: ignore[arg-type]
            )
        if isinstance(event, (ScalarEvent, CollectionStartEvent)):
            if event.anchor is not None:
                self.refusals.append(
                    (
                        line,
                        column,
                        f"anchors (&{event.anchor}) are not allowed in {self.words.plural}; "
                        + self.words.anchor_fix,
                    )
                )
            if event.tag is not None and event.tag != "!":
                tag = event.tag.replace("tag:yaml.org,2002:", "!!")
                self.refusals.append(
                    (
                        line,
                        column,
                        f"tags ({tag}) are not allowed in {self.words.plural}; "
                        "write plain values (quote a string)",
                    )
                )
        if isinstance(event, CollectionStartEvent):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise Abort(line, column, f"nesting deeper than {MAX_DEPTH} levels")
            try:
                node = super().compose_node(parent, index)
            finally:
                self.depth -= 1
        else:
            node = super().compose_node(parent, index)
        assert node is not None
        return node


def core_scalar(text: str) -> Any:
    """Resolve a plain scalar by the YAML 1.2 core schema."""
    if text in NULL_WORDS:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _INT.match(text):
        return int(text)
    if _OCT.match(text):
        return int(text[2:], 8)
    if _HEX.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.match(text):
        return math.nan
    return text


def drops_digits(text: str, value: float) -> bool:
    """Whether ``text`` read as the float ``value`` loses digits written (``3.10``)."""
    digits = text.lstrip("+-")
    if "." not in digits or "e" in digits.lower() or not math.isfinite(value):
        return False
    return digits.endswith("0") and not digits.rstrip("0").endswith(".")  # 2.0 says 2.0


def block_starts(lines: list[str], node: ScalarNode) -> list[tuple[int, int, int]]:
    """Where each content line of a block scalar starts: ``(offset, line, column)``.

    Offsets are into the value as YAML reads it: a literal (``|``) keeps every line
    break; a folded (``>``) one joins lines with one space and keeps one line break
    per blank line. (More-indented lines of a folded scalar, which keep their breaks,
    are counted as folded: their offsets may be off by one each.)
    """
    folded = node.style == ">"
    first = node.start_mark.line + 1
    indent: int | None = None
    starts: list[tuple[int, int, int]] = []
    offset = 0
    joined = False  # whether a content line came before with no blank line since
    for index in range(first, len(lines)):
        line = lines[index]
        if not line.strip():
            offset += 1
            joined = False
            continue
        width = len(line) - len(line.lstrip(" "))
        if indent is None:
            indent = width
        if width < indent:
            break
        if folded and joined:
            offset += 1  # the space that joins two folded lines
        starts.append((offset, index + 1, indent + 1))
        offset += len(line) - indent + (0 if folded else 1)
        joined = True
    return starts
