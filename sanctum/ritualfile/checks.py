"""File-level checks of a validated ritual: names, references, expressions, paths.

Runs after the pydantic model accepted the file's shape and before any engine code:
every sigil, conduit, oracle, tome and policy a sigil names must exist (with a
did-you-mean), every expression and template must compile in the sandbox with only
known names, names a YAML 1.1 reader would turn into booleans must be quoted, and
circle and tome paths must stay inside the project folder. Nothing here imports user
code.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import sanctum.errors as sanctum_errors
from sanctum.aether import ERRORS_CONDUIT
from sanctum.codex.urls import parse_codex_url
from sanctum.errors import SealError
from sanctum.jsontypes import has_json_type
from sanctum.ritualfile.diagnostics import Problems, did_you_mean
from sanctum.ritualfile.expressions import check_expression, check_template, shown_source
from sanctum.ritualfile.kinds import kind_of
from sanctum.ritualfile.loader import YamlPath
from sanctum.ritualfile.models import PolicySpec, RedactWardSpec, RitualSpec
from sanctum.ritualfile.resolve import ResolveError, confine, is_reference

__all__ = ["BUILTIN_REDUCERS", "Checker", "exception_class", "has_json_type"]

BUILTIN_REDUCERS = ("overwrite", "append", "add", "merge_dict")
"""Reducer names a conduit may use without Python code."""

END_NAMES = frozenset({"END", "__end__"})
_RESERVED_SIGILS = frozenset({"START", "END", "__start__", "__end__"})
_CONDUIT_NAME = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")
_SIGIL_NAME = re.compile(r"\A[A-Za-z_][A-Za-z0-9_.-]*\Z")
_NULL_WORDS = frozenset({"~", "null", "Null", "NULL", ""})
_JINJA_WORDS = frozenset(
    [
        "true",
        "false",
        "none",
        "True",
        "False",
        "None",
        "and",
        "or",
        "not",
        "in",
        "is",
        "if",
        "else",
        "for",
        "recursive",
    ]
)


def exception_class(name: str) -> type[BaseException] | None:
    """The exception class ``retry_on`` may name: a builtin or a sanctum error.

    Args:
        name: The class name, e.g. ``"TimeoutError"`` or ``"OracleTimeoutError"``.

    Returns:
        The class, or None when no such exception exists.
    """
    for source in (sanctum_errors, builtins):
        found = getattr(source, name, None)
        if isinstance(found, type) and issubclass(found, BaseException):
            return found
    return None


def _exception_names() -> list[str]:
    names = []
    for source in (sanctum_errors, builtins):
        for name, value in vars(source).items():
            if isinstance(value, type) and issubclass(value, BaseException):
                names.append(name)
    return names


def spell_names(folder: Path) -> set[str]:
    """Spell names declared by the ``spell.json`` manifests under ``folder`` (no import).

    The folder is walked and each manifest checked as the Tome will load it
    (:meth:`sanctum.grimoire.tome.Tome.manifest_names`).

    Raises:
        ValueError: A SpellManifestError naming the broken ``spell.json`` and what is
            wrong with it (not JSON, empty, not an object, a field missing, a name twice).
    """
    if not folder.is_dir():
        return set()
    from sanctum.grimoire.tome import Tome  # lazy: only rituals with tomes pay for it

    return set(Tome.manifest_names(folder))


class Checker:
    """Check one validated ritual and record problems at their positions.

    Args:
        spec: The validated model (only its sound entries when ``dropped`` names some).
        problems: Where to record problems (holds the loaded file's positions).
        folder: The ritual file's folder.
        root: The project folder paths must stay inside.
        dropped: Section -> names of entries set aside as broken (already reported);
            they still count as existing, so referring to them is no second error.
    """

    def __init__(
        self,
        spec: RitualSpec,
        problems: Problems,
        folder: Path,
        root: Path,
        *,
        dropped: Mapping[str, Collection[str]] | None = None,
    ) -> None:
        self.spec = spec
        self.problems = problems
        self.loaded = problems.loaded
        self.folder = folder
        self.root = root
        self.dropped: Mapping[str, Collection[str]] = dropped or {}

        def names(section: str) -> set[str]:
            return {*getattr(spec, section), *self.dropped.get(section, ())}

        self.conduits = names("aether") | names("inputs")
        self.known = {*self.conduits, ERRORS_CONDUIT}
        self.sigils = names("sigils")
        self.oracles = names("oracles")
        self.tomes = names("tomes")
        self.policies = names("policies")
        self.tome_spells: dict[str, set[str]] = {}
        self.broken_tomes: set[str] = set()  # a spell.json would not load (reported)

    # ------------------------------------------------------------------ helpers
    # (public: the sigil kinds in sanctum.ritualfile.kinds check with them)

    @staticmethod
    def is_reference(text: str) -> bool:
        """Whether ``text`` has the ``module:function`` shape (nothing is imported)."""
        return is_reference(text)

    def quoted_hint(self, path: YamlPath, *, key: bool) -> bool:
        plain = self.loaded.plain_boolean_keys if key else self.loaded.plain_booleans
        if path in plain:
            word = path[-1] if key else self._value_at(path)
            read = (
                "as null (no name) by YAML"
                if word in _NULL_WORDS
                else "as a boolean by YAML 1.1 tools"
            )
            self.problems.add(
                path,
                f'`{word}` is read {read}; quote it where a name is expected: "{word}"',
                key=key,
            )
            return True
        return False

    def _value_at(self, path: YamlPath) -> Any:
        node: Any = self.loaded.data
        for part in path:
            node = node[part]
        return node

    def ref(self, path: YamlPath, name: str, pool: Collection[str], what: str, hint: str) -> None:
        if self.quoted_hint(path, key=False):
            return
        if name not in pool:
            self.problems.add(
                path, f"{what} {name!r} does not exist{_then(did_you_mean(name, pool), hint)}"
            )

    def target(self, path: YamlPath, name: str, owner: str, *, who: str | None = None) -> None:
        if self.quoted_hint(path, key=False):
            return
        if name in END_NAMES:
            return
        if name not in self.sigils:
            if who is None:
                who = "`entry` names" if owner == "entry" else f"sigil {owner!r} points to"
            pool = [*self.sigils] if who.startswith("on_error") else [*self.sigils, "END"]
            self.problems.add(
                path,
                f"{who} {name!r}, which is not a sigil{did_you_mean(name, pool)}",
            )

    def conduit(self, path: YamlPath, name: str, owner: str) -> None:
        if self.quoted_hint(path, key=False):
            return
        if name not in self.conduits:
            self.problems.add(
                path,
                f"sigil {owner!r} writes {name!r}, which is not a conduit"
                f"{_then(did_you_mean(name, self.conduits), '; declare it under `aether:`')}",
            )

    def expression(self, path: YamlPath, source: str, owner: str, known: Collection[str]) -> None:
        done = self.problems.loaded.interpolations.get(path)
        shown = shown_source(source, done)  # ${NAME}, never the value
        for message in check_expression(source, known, done):
            self.problems.add(path, f"sigil {owner!r}: `{shown}`: {message}")

    def template(self, path: YamlPath, source: str, owner: str, known: Collection[str]) -> None:
        done = self.problems.loaded.interpolations.get(path)
        for message in check_template(source, known, done):
            line = getattr(message, "line", None)
            if line is not None and line > 1:  # in a block scalar: the mistake's own line
                offset = sum(len(text) + 1 for text in source.split("\n")[: line - 1])
                where = self.problems.loaded.position_at(path, offset)
                self.problems.add_at(*where, f"sigil {owner!r}: {message}")
            else:
                self.problems.add(path, f"sigil {owner!r}: {message}")

    # ------------------------------------------------------------------ run

    def _public(self) -> None:
        """``public:`` names variables the file reads, none of them a credential."""
        from sanctum.ritualfile.env import looks_secret

        loaded = self.problems.loaded
        read: dict[str, bool] = {}  # variable -> read for an oracle's api_key
        for path, done in loaded.interpolations.items():
            credential = len(path) == 3 and path[0] == "oracles" and path[2] == "api_key"
            for item in done:
                read[item.name] = read.get(item.name, False) or credential
        seen: set[str] = set()
        for index, name in enumerate(self.spec.public):
            where: YamlPath = ("public", index)
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                self.problems.add(
                    where,
                    f"public: {name!r} is not an environment variable name; write the name "
                    "alone (OLLAMA_HOST), without ${ } or a value",
                )
            elif name in seen:
                self.problems.add(where, f"public: {name} is listed twice; list it once")
            elif name not in read:
                self.problems.add(
                    where,
                    f"public: {name} is not read by any ${{...}} in this file (list only "
                    f"variables the file reads){did_you_mean(name, read)}",
                )
            elif read[name]:
                self.problems.add(
                    where,
                    f"public: {name} is read for an oracle's api_key, which is always "
                    "secret; remove it from public:",
                )
            elif looks_secret(name):
                self.problems.add(
                    where,
                    f"public: {name} is named like a credential (key, token, secret, "
                    "password), so its value stays secret; rename the variable or remove "
                    "it from public:",
                )
            seen.add(name)

    def run(self) -> None:
        """Run every check."""
        self._project()
        self._public()
        self._names()
        self._reducers_and_inputs()
        self._tomes()
        entry = [self.spec.entry] if isinstance(self.spec.entry, str) else self.spec.entry
        if not entry and "entry" not in self.dropped:
            self.problems.add(("entry",), "`entry` names no sigil; name where the ritual begins")
        seen: set[str] = set()
        for index, name in enumerate(entry):
            path: YamlPath = ("entry",) if isinstance(self.spec.entry, str) else ("entry", index)
            if name in END_NAMES:
                self.problems.add(path, "the ritual cannot begin at END; name a sigil")
            elif name in seen:
                self.problems.add(path, f"`entry` names {name!r} twice; name it once")
            else:
                self.target(path, name, "entry")
            seen.add(name)
        for name, oracle in self.spec.oracles.items():
            self._fallback(name, list(getattr(oracle, "fallback", None) or ()))
            if getattr(oracle, "provider", "") == "llamacpp" and (
                (oracle.model is None) == (oracle.package is None)  # type: ignore[union-attr]
            ):
                self.problems.add(
                    ("oracles", name),
                    f"oracle {name!r}: give exactly one of `model` (a .gguf path) and `package`",
                    key=True,
                )
        for name, policy in self.spec.policies.items():
            self._policy(("policies", name), policy, None, f"policy {name!r}")
        if self.spec.default_policy is not None:
            self._policy_ref(("default_policy",), self.spec.default_policy, None)
        for name, sigil in self.spec.sigils.items():
            self._sigil(name, sigil)
        for index, ward in enumerate(self.spec.wards):
            if isinstance(ward, RedactWardSpec):
                for number, pattern in enumerate(ward.redact.patterns):
                    try:
                        re.compile(pattern)
                    except re.error as exc:
                        self.problems.add(
                            ("wards", index, "redact", "patterns", number),
                            f"invalid regular expression: {exc}",
                        )
        codex = self.spec.codex
        if codex is not None:
            try:
                parse_codex_url(codex)
            except SealError as exc:
                self.problems.add(("codex",), str(exc))

    def _fallback(self, name: str, chain: list[str]) -> None:
        """An oracle's ``fallback:`` names other oracles of the file, each once.

        A repeat inside one list is an error at the second mention; a cycle across
        entries (``a: [b]``, ``b: [a]``) is not: the compiled chain is the depth-first
        expansion of the lists, each oracle once (``Builder.chain``).
        """
        for index, other in enumerate(chain):
            path: YamlPath = ("oracles", name, "fallback", index)
            if other in chain[:index]:
                self.problems.add(
                    path,
                    f"oracle {name!r}: fallback names {other!r} twice; name each oracle once",
                )
            elif other == name:
                self.problems.add(
                    path,
                    f"oracle {name!r} names itself as its fallback; name another oracle "
                    "under `oracles:`",
                )
            elif other not in self.oracles and not self.quoted_hint(path, key=False):
                others = [o for o in self.oracles if o != name]
                self.problems.add(
                    path,
                    f"oracle {name!r}: fallback {other!r} is not under `oracles:`"
                    + (did_you_mean(other, others) or "; name another oracle of the file"),
                )

    def _project(self) -> None:
        declared = self.spec.project
        if declared is None:
            return
        if not self.root.is_dir():
            what = "is not a folder" if self.root.exists() else "does not exist"
            self.problems.add(("project",), f"project folder {declared!r} {what} ({self.root})")
        elif self.folder != self.root and not self.folder.is_relative_to(self.root):
            self.problems.add(
                ("project",),
                f"project folder {declared!r} ({self.root}) does not hold this ritual file; "
                "name a folder above it, e.g. `project: ..`",
            )

    def _names(self) -> None:
        for section in ("inputs", "aether"):
            for name in getattr(self.spec, section):
                path = (section, name)
                if self.quoted_hint(path, key=True):
                    continue
                if not _CONDUIT_NAME.match(name) or name in _JINJA_WORDS or name.startswith("__"):
                    self.problems.add(
                        path,
                        f"{name!r} cannot name a conduit: use ASCII letters, digits and _ "
                        "(not starting with a digit or __, not a keyword like `not`)",
                        key=True,
                    )
        for section in ("oracles", "tomes", "policies"):
            for name in getattr(self.spec, section):
                self.quoted_hint((section, name), key=True)
        for name in self.spec.sigils:
            path = ("sigils", name)
            if self.quoted_hint(path, key=True):
                continue
            if name in _RESERVED_SIGILS:
                self.problems.add(
                    path, f"{name!r} is reserved; choose another sigil name", key=True
                )
            elif not _SIGIL_NAME.match(name):
                self.problems.add(
                    path,
                    f"{name!r} cannot name a sigil: a sigil name starts with an ASCII letter "
                    "or _, followed by ASCII letters, digits, _, - and . (e.g. `step_1`)",
                    key=True,
                )

    def _reducers_and_inputs(self) -> None:
        for name, conduit in self.spec.aether.items():
            reducer = conduit.reducer
            if reducer not in BUILTIN_REDUCERS and not is_reference(reducer):
                self.problems.add(
                    ("aether", name, "reducer"),
                    f"unknown reducer {reducer!r}"
                    + _then(
                        did_you_mean(reducer, BUILTIN_REDUCERS),
                        f"; use {', '.join(BUILTIN_REDUCERS)} or 'module:function'",
                    ),
                )
            needed = _REDUCER_TYPES.get(reducer)
            if needed is not None and conduit.type is not None and conduit.type not in needed:
                self.problems.add(
                    ("aether", name, "type"),
                    f"conduit {name!r} has reducer {reducer}, which needs type "
                    f"{' or '.join(needed)}, not {conduit.type}",
                )
            if "default" not in conduit.model_fields_set:
                continue
            where: YamlPath = ("aether", name, "default")
            if needed is not None and not has_json_type(conduit.default, needed):
                self.problems.add(
                    where,
                    f"default of conduit {name!r} must be {_a_value(needed)}: its reducer "
                    f"{reducer} combines each write with it (got {_shown(conduit.default)})",
                )
            elif (
                conduit.type is not None
                and conduit.default is not None
                and not has_json_type(conduit.default, (conduit.type,))
            ):
                self.problems.add(
                    where, f"default of conduit {name!r} must be of type {conduit.type}"
                )
        for name, spec in self.spec.inputs.items():
            spot: YamlPath = ("inputs", name)
            if name in self.spec.aether:
                self.problems.add(
                    ("aether", name),
                    f"{name!r} is declared under both `inputs:` and `aether:`; an input is "
                    "a conduit already — remove it from one of them",
                    key=True,
                )
            if spec.enum is not None:
                if not spec.enum:
                    self.problems.add(
                        (*spot, "enum"),
                        f"`enum` of input {name!r} is empty, so no value could be given; "
                        "list the allowed values or remove `enum`",
                    )
                for index, option in enumerate(spec.enum):
                    if not has_json_type(option, (spec.type,)):
                        self.problems.add(
                            (*spot, "enum", index),
                            f"enum value {_shown(option)} of input {name!r} is not of type "
                            f"{spec.type}",
                        )
            if "default" in spec.model_fields_set and spec.default is not None:
                value = spec.default
                if not has_json_type(value, (spec.type,)):
                    self.problems.add(
                        (*spot, "default"),
                        f"default of input {name!r} must be of type {spec.type}",
                    )
                if spec.enum and value not in spec.enum:
                    self.problems.add(
                        (*spot, "default"),
                        f"default of input {name!r} is not one of its enum values",
                    )

    def _tomes(self) -> None:
        for name, tome in self.spec.tomes.items():
            path = ("tomes", name, "path")
            try:
                folder = confine(self.folder, tome.path, self.root, "tome folder")
            except ResolveError as exc:
                self.problems.add(path, str(exc))
                continue
            if not folder.is_dir():
                self.problems.add(path, f"tome folder {tome.path!r} does not exist ({folder})")
                continue
            try:
                self.tome_spells[name] = spell_names(folder)
            except ValueError as exc:  # a broken spell.json: its spells are unknown
                self.problems.add(path, f"tome {name!r}: {exc}")
                self.broken_tomes.add(name)

    def _policy_ref(self, path: YamlPath, policy: PolicySpec | str, owner: str | None) -> None:
        if isinstance(policy, str):
            self.ref(path, policy, self.policies, "policy", "; define it under `policies:`")
            named = self.spec.policies.get(policy)
            if owner is not None and named is not None and named.on_error == owner:
                self.problems.add(
                    path,
                    f"sigil {owner!r} uses policy {policy!r}, whose on_error is {owner!r} "
                    "itself; a sigil cannot be its own fallback — give it another policy",
                )
        else:
            label = "`default_policy`" if owner is None else f"sigil {owner!r}"
            self._policy(path, policy, owner, label)

    def _policy(self, path: YamlPath, policy: PolicySpec, owner: str | None, label: str) -> None:
        if policy.on_error is not None:
            target = policy.on_error
            where = (*path, "on_error")
            if target in END_NAMES:
                self.problems.add(where, f"on_error of {label} must name a fallback sigil, not END")
            elif target == owner:
                self.problems.add(where, f"sigil {owner!r} cannot be its own on_error fallback")
            else:
                self.target(where, target, owner or "policy", who=f"on_error of {label} names")
        for index, name in enumerate(policy.retry_on or []):
            if exception_class(name) is None:
                self.problems.add(
                    (*path, "retry_on", index),
                    f"unknown exception {name!r}"
                    + _then(
                        did_you_mean(name, _exception_names()),
                        "; name a builtin exception or one from sanctum.errors",
                    ),
                )

    def _sigil(self, name: str, sigil: Any) -> None:
        base: YamlPath = ("sigils", name)
        known = self.known
        if sigil.next is None and sigil.routes is None:
            self.problems.add(
                base,
                f"sigil {name!r} has nowhere to go; add `next:` (a sigil, a list, or END) "
                "or `routes:`",
                key=True,
            )
        if sigil.next is not None and sigil.routes is not None:
            self.problems.add(
                (*base, "routes"),
                f"sigil {name!r} has both `next` and `routes`; use one of them",
                key=True,
            )
        if isinstance(sigil.next, str):
            self.target((*base, "next"), sigil.next, name)
        elif isinstance(sigil.next, list):
            if not sigil.next:
                self.problems.add((*base, "next"), "`next` is an empty list; name a sigil or END")
            seen: set[str] = set()
            for index, target in enumerate(sigil.next):
                same = "END" if target in END_NAMES else target
                if same in seen:
                    self.problems.add(
                        (*base, "next", index),
                        f"sigil {name!r} names {target!r} twice in `next`; name it once",
                    )
                else:
                    self.target((*base, "next", index), target, name)
                seen.add(same)
        if sigil.routes is not None:
            if not sigil.routes:
                self.problems.add((*base, "routes"), "`routes` is empty; add at least `- to: END`")
            last = len(sigil.routes) - 1
            for index, route in enumerate(sigil.routes):
                where: YamlPath = (*base, "routes", index)
                self.target((*where, "to"), route.to, name)
                if route.when is None and index != last:
                    self.problems.add(
                        where, "only the last route may omit `when` (it is the default)"
                    )
                elif route.when is not None:
                    self.expression((*where, "when"), route.when, name, known)
                    if index == last:
                        self.problems.add(
                            (*where, "when"),
                            f"the last route of sigil {name!r} has a `when`; end the list "
                            "with a default route without `when` (e.g. `- to: END`)",
                        )
        if sigil.policy is not None:
            self._policy_ref((*base, "policy"), sigil.policy, name)
        kind_of(sigil).check(self, name, sigil, known)


_REDUCER_TYPES: dict[str, tuple[str, ...]] = {
    "append": ("array",),
    "add": ("integer", "number"),
    "merge_dict": ("object",),
}
"""The JSON types a built-in reducer can combine (overwrite takes any)."""


def _a_value(types: tuple[str, ...]) -> str:
    words = {"array": "a list", "integer": "a number", "number": "a number", "object": "a mapping"}
    return " or ".join(dict.fromkeys(words[t] for t in types))


def _shown(value: Any) -> str:
    return "null" if value is None else f"{type(value).__name__} {value!r:.40}"


def _then(suggestion: str, advice: str) -> str:
    """``"; did you mean 'x'? If not, <advice>"`` (either alone: as it is)."""
    if not suggestion or not advice:
        return suggestion or advice
    return f"{suggestion} If not, {advice.removeprefix('; ')}"
