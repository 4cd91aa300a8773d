"""The scribe that reads a ritual file strictly, remembering where every word stood.

A line-aware loader for a strict subset of YAML, built on PyYAML's safe parser and
composer (no constructor ever runs, so no tag can build a Python object). It keeps
every mapping key's and value's ``line:column`` and refuses what YAML lets slip:

* YAML 1.2 core scalars only — ``yes``/``no``/``on``/``off`` stay strings (the plain
  ones are remembered, so a name written that way can be refused with a hint);
* duplicate keys, anchors, aliases, merge keys (``<<``) and tags (``!!python/object``);
* several documents, tabs in indentation, an empty file, a file over 1 MiB, nesting
  deeper than :data:`MAX_DEPTH`.

``${VAR}`` references in string values are substituted here (see
:mod:`sanctum.ritualfile.env`). The result is plain data plus position maps keyed by path
tuples (``("sigils", "classify", "next")``). Bytes that are not UTF-8 text, or hold
characters YAML refuses (a NUL: a binary file), are a positioned problem too.

:func:`load_yaml_data` reads a plain data document (an input file, YAML or JSON) with
the same strictness, messages naming it for what it is, and no ``${VAR}`` substitution.
The composer and the core-schema scalars live in :mod:`sanctum.ritualfile._yaml_compose`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
import yaml.composer
import yaml.reader
import yaml.resolver
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from sanctum.errors import FileProblem, RitualFileError
from sanctum.ritualfile._yaml_compose import (
    MAX_DEPTH,
    NULL_WORDS,
    YAML11_BOOLEANS,
    Abort,
    Position,
    StrictComposer,
    Words,
    YamlPath,
    block_starts,
    core_scalar,
    drops_digits,
    words_for,
)
from sanctum.ritualfile.env import Interpolation, InterpolationError, interpolate

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "YAML11_BOOLEANS",
    "LoadedFile",
    "Position",
    "YamlPath",
    "bytes_digest",
    "load_yaml_data",
    "load_yaml_file",
    "load_yaml_text",
]

MAX_BYTES = 1024 * 1024
"""Largest ritual file accepted, in bytes (1 MiB)."""


@dataclass
class LoadedFile:
    """A ritual file read into plain data, with the position of every key and value.

    Attributes:
        path: The file's path as given (used in messages).
        data: The document as plain dicts, lists and scalars.
        values: Path -> position of the value at that path.
        keys: Path -> position of the mapping key leading to that path.
        plain_booleans: Paths whose value was an unquoted YAML 1.1 boolean word such
            as ``no`` — kept as a string, but refused where a name is expected.
        plain_boolean_keys: Paths whose mapping *key* was such a word, or a plain null
            word (``null``, ``~``) — kept as text, but refused where a name is expected.
        interpolations: Path -> the ``${VAR}`` substitutions made in that value.
        digest: ``"sha256:"`` plus 64 hex digits: the hash of the very bytes parsed.
        blocks: Path -> where each line of a ``|`` or ``>`` block scalar's value
            starts: ``(offset in the value, line, column)`` triples, in order (see
            :meth:`position_at`).
        lossy_numbers: Paths whose plain scalar was read as a float that drops digits
            written (``3.10`` is 3.1), with the text as written: a version number
            meant as text, most likely (see ``RitualFile.warnings``).
    """

    path: str
    data: Any
    values: dict[YamlPath, Position] = field(default_factory=dict)
    keys: dict[YamlPath, Position] = field(default_factory=dict)
    plain_booleans: set[YamlPath] = field(default_factory=set)
    plain_boolean_keys: set[YamlPath] = field(default_factory=set)
    interpolations: dict[YamlPath, list[Interpolation]] = field(default_factory=dict)
    digest: str = ""
    blocks: dict[YamlPath, list[tuple[int, int, int]]] = field(default_factory=dict)
    lossy_numbers: dict[YamlPath, str] = field(default_factory=dict)

    def warnings(self) -> list[FileProblem]:
        """What loads but likely misreads: an untyped default's ``3.10`` becoming 3.1.

        Returns:
            One ``warning: ...`` FileProblem per float of an ``inputs:``/``aether:``
            default that drops digits as written (unless declared ``type: number``),
            in file order.
        """
        found = []
        for path, text in self.lossy_numbers.items():
            section = self.data.get(path[0]) if isinstance(self.data, Mapping) else None
            entry = section.get(path[1]) if isinstance(section, Mapping) else None
            if path[2:3] != ("default",) or not isinstance(entry, Mapping):
                continue
            if entry.get("type") == "number":  # numbers meant: nothing to warn about
                continue
            what = "input" if path[0] == "inputs" else "conduit"
            line, column = self.position(path)
            found.append(
                FileProblem(
                    self.path,
                    line,
                    column,
                    (
                        f"warning: {what} {path[1]!r}: `{text}` in its default is read as the "
                        "number "
                        f'{float(text)!r}; quote it ("{text}") if it is text, such as a version'
                    ),
                )
            )
        return sorted(found, key=lambda p: (p.line, p.column))

    def position_at(self, path: YamlPath, offset: int) -> Position:
        """The position of character ``offset`` of the value at ``path``, in the file.

        Inside a ``|`` or ``>`` block scalar this is the line the character is written
        on (not the indicator's line); in a one-line value, the column moves along it.

        Args:
            path: The path of a scalar value.
            offset: A 0-based character offset into the value as read.

        Returns:
            A 1-based ``(line, column)``; the value's own position when the offset
            cannot be placed.
        """
        starts = self.blocks.get(path)
        if not starts:
            line, column = self.position(path)
            return (line, column + max(offset, 0))
        best = starts[0]
        for start in starts:
            if start[0] > offset:
                break
            best = start
        begun, line, column = best
        return (line, column + max(offset - begun, 0))

    def position(self, path: YamlPath, *, key: bool = False) -> Position:
        """The best known position for ``path``: its key or value, else its parent's.

        Args:
            path: The path to locate.
            key: Prefer the mapping key's position over the value's.

        Returns:
            A 1-based ``(line, column)``; ``(1, 1)`` when nothing along the path is known.
        """
        probe = path
        while True:
            first, second = (self.keys, self.values) if key else (self.values, self.keys)
            if probe in first:
                return first[probe]
            if probe in second:
                return second[probe]
            if not probe:
                return (1, 1)
            probe = probe[:-1]
            key = True


_RITUAL_WORDS = words_for("ritual file")

_BAD_BYTE = re.compile(b"[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]")

# Characters YAML 1.2 allows in a stream (section 5.1), everything else is refused.
_BAD_CHARACTER = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)


class _Builder:
    """Walks composed nodes into plain data, recording positions and problems."""

    def __init__(
        self, loaded: LoadedFile, env: Mapping[str, str] | None, words: Words, text: str = ""
    ) -> None:
        self.loaded = loaded
        self.env = env
        self.words = words
        self.problems: list[tuple[int, int, str]] = []
        self.lines = text.splitlines()

    def build(self, node: Node, path: YamlPath) -> Any:
        start = (node.start_mark.line + 1, node.start_mark.column + 1)
        self.loaded.values[path] = start
        if isinstance(node, MappingNode):
            return self._mapping(node, path)
        if isinstance(node, SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        assert isinstance(node, ScalarNode)
        return self._scalar(node, path)

    def _scalar(self, node: ScalarNode, path: YamlPath) -> Any:
        text: str = node.value
        plain = not node.style  # libyaml reports plain as "", PyYAML as None
        if plain and text in YAML11_BOOLEANS:
            self.loaded.plain_booleans.add(path)
        if node.style in ("|", ">"):
            self.loaded.blocks[path] = block_starts(self.lines, node)
        if self.env is not None and ("${" in text or "$${" in text):
            try:
                text, done = interpolate(text, self.env)
            except InterpolationError as exc:
                line, column = node.start_mark.line + 1, node.start_mark.column + 1
                if node.style in ("|", ">"):
                    line, column = self.loaded.position_at(path, exc.offset)
                elif node.start_mark.line == node.end_mark.line and node.style in (
                    None,
                    "",
                    "'",
                    '"',
                ):
                    column += exc.offset + (0 if plain else 1)
                self.problems.append((line, column, str(exc)))
                return None
            if done:
                self.loaded.interpolations[path] = done
        if not plain:
            return text
        line, column = node.start_mark.line + 1, node.start_mark.column + 1
        try:
            value = core_scalar(text)
        except ValueError:
            self.problems.append((line, column, "number too long; write a smaller number"))
            return None
        if isinstance(value, float) and drops_digits(text, value):
            self.loaded.lossy_numbers[path] = text
        if self.words.finite and isinstance(value, float) and not math.isfinite(value):
            self.problems.append(
                (
                    line,
                    column,
                    f"`{text}` is not a finite number; {self.words.plural} take finite "
                    "numbers only (write a number such as 1e9, or quote it for text)",
                )
            )
            return None
        return value

    def _mapping(self, node: MappingNode, path: YamlPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first_seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            line, column = key_node.start_mark.line + 1, key_node.start_mark.column + 1
            if not isinstance(key_node, ScalarNode):
                self.problems.append(
                    (line, column, "mapping keys must be plain names, not lists or mappings")
                )
                continue
            key = key_node.value
            if not key_node.style and key == "<<":
                self.problems.append(
                    (
                        line,
                        column,
                        f"merge keys (<<) are not allowed in {self.words.plural}; "
                        + self.words.merge_fix,
                    )
                )
                continue
            if key in first_seen:
                self.problems.append(
                    (
                        line,
                        column,
                        f"duplicate key {key!r} (first defined at line {first_seen[key]}); "
                        "YAML would silently keep only the last one",
                    )
                )
                continue
            first_seen[key] = line
            child = (*path, key)
            self.loaded.keys[child] = (line, column)
            if not key_node.style and (key in YAML11_BOOLEANS or key in NULL_WORDS):
                self.loaded.plain_boolean_keys.add(child)
            result[key] = self.build(value_node, child)
        return result


def _tab_problems(text: str) -> list[tuple[int, int, str]]:
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip(" \t")
        indent = line[: len(line) - len(stripped)]
        if "\t" in indent and stripped:
            problems.append(
                (
                    number,
                    indent.index("\t") + 1,
                    "tab in indentation; YAML needs spaces (replace the tab with spaces)",
                )
            )
    return problems


def _fail(path: str, problems: list[tuple[int, int, str]]) -> RitualFileError:
    ordered = sorted(problems, key=lambda p: (p[0], p[1]))
    return RitualFileError([FileProblem(path, line, col, msg) for line, col, msg in ordered])


def _position(text: str, offset: int) -> Position:
    """The 1-based ``(line, column)`` of a character offset in ``text``."""
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def _decode(raw: bytes, path: str, words: Words) -> str:
    """UTF-8 text (a BOM allowed) holding only characters YAML accepts."""
    if len(raw) > MAX_BYTES:
        raise _fail(
            path,
            [
                (
                    1,
                    1,
                    f"file is {len(raw)} bytes; {words.plural} are limited to 1 MiB "
                    f"({MAX_BYTES} bytes){words.too_big}",
                )
            ],
        )
    control = _BAD_BYTE.search(raw)
    try:
        decoded = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if control is None or control.start() > exc.start:
            before = raw[: exc.start]
            line = before.count(b"\n") + 1
            column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
            raise _fail(
                path, [(line, column, "file is not valid UTF-8 text (is it a binary file?)")]
            ) from None
        decoded = raw[: control.start() + 1].decode("utf-8-sig", "replace")
    bad = _BAD_CHARACTER.search(decoded)
    if bad is not None:
        line, column = _position(decoded, bad.start())
        point = ord(bad.group())
        kind = "control character" if point < 0x20 or 0x7F <= point <= 0x9F else "character"
        hint = (
            " (is it a binary file?)"
            if bad.group() == "\x00"
            else "; remove it or write it as an escape in a double-quoted string"
        )
        raise _fail(path, [(line, column, f"{kind} U+{point:04X} is not allowed in YAML{hint}")])
    return decoded


def _compose(
    decoded: str, path: str, words: Words
) -> tuple[Node | None, list[tuple[int, int, str]]]:
    """Parse one YAML document into nodes; returns the root node and soft refusals."""
    tabs = _tab_problems(decoded)
    if tabs:
        raise _fail(path, tabs)
    try:
        composer = StrictComposer(decoded, words)
    except yaml.reader.ReaderError as exc:  # pragma: no cover - _decode refuses these first
        line, column = _position(decoded, exc.position)
        raise _fail(path, [(line, column, "character not allowed in YAML")]) from None
    try:
        node = composer.get_single_node()
    except Abort as exc:
        raise _fail(path, [*composer.refusals, (exc.line, exc.column, exc.message)]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = exc.problem or exc.context or "invalid YAML"
        if "expected a single document" in message or "but found another document" in message:
            message = words.documents
        raise _fail(path, [*composer.refusals, (line, column, message)]) from None
    except yaml.reader.ReaderError as exc:  # pragma: no cover - _decode refuses these first
        line, column = _position(decoded, exc.position)
        raise _fail(path, [(line, column, "character not allowed in YAML")]) from None
    except yaml.YAMLError as exc:  # pragma: no cover - every parser error is marked
        raise _fail(path, [(1, 1, f"invalid YAML ({type(exc).__name__})")]) from None
    finally:
        composer.dispose()
    return node, composer.refusals


def bytes_digest(raw: bytes) -> str:
    """The content hash a Seal records for a ritual file: ``"sha256:"`` plus 64 hex digits."""
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def _load(text: str | bytes, path: str, env: Mapping[str, str] | None, words: Words) -> LoadedFile:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    decoded = _decode(raw, path, words)
    node, refusals = _compose(decoded, path, words)
    if node is None:
        raise _fail(path, [(1, 1, words.empty)])
    loaded = LoadedFile(path=path, data=None, digest=bytes_digest(raw))
    builder = _Builder(loaded, env, words, decoded)
    loaded.data = builder.build(node, ())
    problems = refusals + builder.problems
    if problems:
        raise _fail(path, problems)
    return loaded


def load_yaml_text(
    text: str | bytes,
    path: str = "<ritual>",
    *,
    env: Mapping[str, str] | None = None,
    what: str = "ritual file",
) -> LoadedFile:
    """Read ritual-file text strictly into plain data with positions.

    Args:
        text: The file's content (``bytes`` are decoded as UTF-8, a BOM is allowed).
        path: The file's name for messages.
        env: Environment for ``${VAR}`` substitution (defaults to ``os.environ``).
        what: What the document is, for messages (``"ritual file"``, ``"test file"``).

    Returns:
        The :class:`LoadedFile`.

    Raises:
        RitualFileError: With every problem found, each as ``path:line:column: message``.
    """
    return _load(text, path, os.environ if env is None else env, words_for(what))


def _read(path: str | Path, words: Words) -> tuple[str, bytes]:
    name = str(path)
    target = Path(path)
    try:
        status = target.stat()
        size = status.st_size
        if stat.S_ISDIR(status.st_mode):
            raise _fail(name, [(1, 1, f"this is a folder, not a {words.noun}")])
        if not stat.S_ISREG(status.st_mode):
            kind = "a named pipe" if stat.S_ISFIFO(status.st_mode) else "a device or socket"
            raise _fail(
                name,
                [(1, 1, f"this is {kind}, not a regular file; a {words.noun} must be a file")],
            )
        if size > MAX_BYTES:
            raise _fail(
                name,
                [
                    (
                        1,
                        1,
                        f"file is {size} bytes; {words.plural} are limited to 1 MiB "
                        f"({MAX_BYTES} bytes){words.too_big}",
                    )
                ],
            )
        with target.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise _fail(name, [(1, 1, f"cannot read the {words.noun}: {reason}")]) from None
    return name, raw


def load_yaml_file(
    path: str | Path, *, env: Mapping[str, str] | None = None, what: str = "ritual file"
) -> LoadedFile:
    """Read a ritual file from disk strictly (see :func:`load_yaml_text`).

    Args:
        path: The file to read.
        env: Environment for ``${VAR}`` substitution (defaults to ``os.environ``).
        what: What the document is, for messages (``"ritual file"``, ``"test file"``).

    Returns:
        The :class:`LoadedFile`.

    Raises:
        RitualFileError: For a missing/unreadable file or any problem in it.
    """
    words = words_for(what)
    name, raw = _read(path, words)
    return _load(raw, name, os.environ if env is None else env, words)


def _depth(value: Any) -> int:
    """How deeply lists and mappings nest in ``value`` (a scalar is 0)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            level += 1
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level) for child in children)
    return deepest


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def load_yaml_data(
    source: str | bytes | Path, *, name: str | None = None, what: str = "input file"
) -> Any:
    """Read one plain YAML or JSON data document strictly (an input file, say).

    The same strict reading as ritual files — YAML 1.2 scalars, no duplicate keys,
    anchors, aliases, merge keys or tags, one document, no tabs in indentation, at most
    1 MiB and 64 levels of nesting, UTF-8 text only — with messages that speak of
    ``what`` rather than of ritual files. ``${VAR}`` is *not* substituted: data is
    taken literally. JSON is read as JSON first (so tab-indented JSON is fine).

    Args:
        source: A :class:`~pathlib.Path` is read from disk; ``str`` or ``bytes`` is
            the document itself.
        name: The name messages give the document (default: the path, or
            ``"<input>"`` for text).
        what: What the document is, for messages (e.g. ``"input file"``).

    Returns:
        The document as plain dicts, lists and scalars (whatever its top level is).

    Raises:
        RitualFileError: For an unreadable, binary, empty or malformed document, each
            problem as ``name:line:column: message``.
    """
    words = words_for(what)
    if isinstance(source, Path):
        label, raw = _read(source, words)
        label = name or label
    else:
        label = name or "<input>"
        raw = source.encode("utf-8") if isinstance(source, str) else source
    decoded = _decode(raw, label, words)
    if decoded.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(decoded, object_pairs_hook=_refuse_duplicates)
        except (ValueError, RecursionError):
            pass  # not plain JSON: the YAML reader says what is wrong, with a position
        else:
            if _depth(data) <= MAX_DEPTH:
                return data
    return _load(decoded, label, None, words).data
