"""Smoke tests for ritual files: ``*.test.yaml`` cases run by ``sanctum test``.

A test file names a ritual and lists cases; each case gives inputs, scripted answers
for the ritual's oracles, the resumption updates to send after each interrupt, and the
expected outcome::

    # yaml-language-server: $schema=../schema/ritual-test.schema.json
    ritual: hello.yaml
    cases:
      - name: greets Ada
        inputs: {name: Ada}
        responses:                 # oracle -> answers (or sigil -> answers)
          bard: ["Hail, Ada!"]
        resume:                    # updates sent after each interrupt, in order
          - {approved: true}
        expect:
          status: done             # done | interrupted | failed
          aether: {greeting: "Hail, Ada!"}   # these keys must equal these values
                                   # (a conduit's default counts when unwritten)
          interrupts: ["Approve"]  # each pause's reason contains this text
          error: null              # for failed: text the error message contains

Every case runs offline: oracles named under ``responses`` become ScriptedOracles,
and Seals go to a MemoryCodex.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, PrivateAttr, ValidationError

from sanctum.aether import ERRORS_CONDUIT
from sanctum.errors import FileProblem, RitualFileError
from sanctum.jsontypes import has_json_type
from sanctum.ritualfile.binding import OracleOverride, special_file_kind
from sanctum.ritualfile.diagnostics import Problems, did_you_mean
from sanctum.ritualfile.loader import YamlPath, load_yaml_file
from sanctum.ritualfile.models import RitualSpec, ScriptLine
from sanctum.wards.secrets import Secrets

__all__ = [
    "RitualTestCase",
    "RitualTestExpect",
    "RitualTestSpec",
    "TestResult",
    "case_cassette",
    "case_oracles",
    "check_test_files",
    "judge",
    "load_test_file",
    "no_cases_result",
]

TEST_SUFFIX = ".test.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class RitualTestExpect(_Strict):
    """What a case expects at the end."""

    status: Literal["done", "interrupted", "failed"] = Field(
        "done",
        description="done: reached END; interrupted: paused after the last resume; "
        "failed: raised an error.",
    )
    aether: dict[str, JsonValue] = Field(
        default_factory=dict, description="Conduits that must hold exactly these values."
    )
    interrupts: list[str] = Field(
        default_factory=list, description="Text each interrupt's reason contains, in order."
    )
    error: str | None = Field(None, description="Text the failure's message contains.")


class RitualTestCase(_Strict):
    """One run of the ritual with inputs, scripted answers and resumptions."""

    name: str = Field(description="The case's name in reports.")
    inputs: dict[str, JsonValue] = Field(default_factory=dict, description="The run's input.")
    responses: dict[str, list[ScriptLine] | dict[str, list[ScriptLine]]] = Field(
        default_factory=dict,
        description="Oracle name -> scripted answers (a list, or sigil -> list).",
    )
    cassette: str | None = Field(
        None,
        description="A cassette (JSON Lines, relative to this file) answering every oracle "
        "call instead of `responses`; `sanctum test --record` records it.",
    )
    resume: list[dict[str, JsonValue]] = Field(
        default_factory=list, description="Updates sent after each interrupt, in order."
    )
    expect: RitualTestExpect = Field(
        default_factory=lambda: RitualTestExpect.model_validate({}),
        description="The expected outcome.",
    )


class RitualTestSpec(_Strict):
    """A ``*.test.yaml`` file: the ritual under test and its cases."""

    ritual: str = Field(description="The ritual file, relative to this file.")
    cases: list[RitualTestCase] = Field(description="The cases.")
    _secrets: list[str] = PrivateAttr(default_factory=list)
    """The values the file read from the environment (``${VAR}``), masked in results."""


@dataclass
class TestResult:
    """The outcome of one case.

    Attributes:
        file: The test file.
        name: The case's name.
        passed: Whether every expectation held.
        message: Why it failed ("" when it passed).
        status: What happened: done, interrupted or failed.
        duration: Wall time in seconds.
        aether: The last Aether seen: final, or at the last interrupt (a fresh run
            starts with every conduit's default); empty when the run failed.
    """

    __test__ = False  # not a pytest class

    file: str
    name: str
    passed: bool
    message: str = ""
    status: str = ""
    duration: float = 0.0
    aether: dict[str, Any] = field(default_factory=dict)
    secrets: Secrets | None = field(default=None, repr=False, compare=False)
    """What the case's ritual and test file must never show (already masked in the
    fields above); a report written from the result (JUnit XML) masks with it too."""


def load_test_file(path: str | Path, *, env: Mapping[str, str] | None = None) -> RitualTestSpec:
    """Read a ``*.test.yaml`` file strictly and check it against the ritual it names.

    Besides the file's own shape: the ``ritual:`` file must exist and be sound (its
    problems are listed after this file's), and every case may only give inputs the
    ritual declares (and must give those without a default), script oracles it has,
    and resume or expect conduits it has — each with a did-you-mean. Loading the
    ritual imports no user code.

    Args:
        path: The test file.
        env: Environment for ``${VAR}`` (default ``os.environ``).

    Returns:
        The RitualTestSpec.

    Raises:
        RitualFileError: For any problem, as ``path:line:column: message``.
    """
    loaded = load_yaml_file(path, env=env, what="test file")
    secrets = _read_values(loaded)
    problems = Problems(loaded, secrets)
    spec: RitualTestSpec | None = None
    try:
        spec = RitualTestSpec.model_validate(loaded.data)
    except ValidationError as exc:
        problems.from_validation(exc, RitualTestSpec)
    ritual_name = loaded.data.get("ritual") if isinstance(loaded.data, dict) else None
    elsewhere: list[FileProblem] = []
    if isinstance(ritual_name, str):
        ritual = _ritual_of(Path(path), ritual_name, problems, env, elsewhere)
        if ritual is not None and spec is not None:
            _check_cases(spec, ritual, problems)
    if problems or elsewhere:
        raise RitualFileError([*problems.sorted(), *elsewhere])
    assert spec is not None
    spec._secrets = secrets
    return spec


def _read_values(loaded: Any) -> list[str]:
    """Every value a test file read from the environment (``${VAR}``): its secrets."""
    return sorted(
        {
            item.value
            for done in loaded.interpolations.values()
            for item in done
            if item.value and not item.from_default
        }
    )


def _ritual_of(
    path: Path,
    name: str,
    problems: Problems,
    env: Mapping[str, str] | None,
    elsewhere: list[FileProblem],
) -> RitualSpec | None:
    """Load the ritual a test file names, reporting at its ``ritual:`` value."""
    from sanctum.ritualfile.compiler import load_ritual

    target = path.parent / name
    if not target.is_file():
        siblings = [
            p.name
            for p in path.parent.glob("*.y*ml")
            if p.is_file() and not p.name.endswith((TEST_SUFFIX, ".test.yml"))
        ]
        problems.add(
            ("ritual",),
            f"ritual file {name!r} does not exist (looked for {target.resolve()}; the path "
            f"is relative to this test file){did_you_mean(name, siblings)}",
        )
        return None
    try:
        return load_ritual(target, env=env)
    except RitualFileError as exc:
        problems.add(("ritual",), f"ritual file {name!r} has problems (see below)")
        elsewhere.extend(exc.problems)
        return None


def _check_cases(spec: RitualTestSpec, ritual: RitualSpec, problems: Problems) -> None:
    """Check each case's names against the ritual's inputs, oracles and conduits."""
    inputs = dict(ritual.inputs)
    required = [n for n, i in inputs.items() if "default" not in i.model_fields_set]
    conduits = {*ritual.aether, *inputs, ERRORS_CONDUIT}
    label = f"ritual {ritual.name!r}"
    for index, case in enumerate(spec.cases):
        base: YamlPath = ("cases", index)
        who = f"case {case.name!r}"
        for key, value in case.inputs.items():
            if key not in inputs:
                declared = ", ".join(sorted(inputs)) or "none"
                problems.add(
                    (*base, "inputs", key),
                    f"{who}: {label} declares no input {key!r}{did_you_mean(key, inputs)} "
                    f"(declared inputs: {declared})",
                    key=True,
                )
                continue
            wanted = inputs[key]
            if not has_json_type(value, (wanted.type,)):
                problems.add(
                    (*base, "inputs", key),
                    f"{who}: input {key!r} of {label} must be of type {wanted.type}, "
                    f"got {'null' if value is None else type(value).__name__} {value!r:.40}",
                )
            elif wanted.enum is not None and value not in wanted.enum:
                options = ", ".join(repr(o) for o in wanted.enum)
                problems.add(
                    (*base, "inputs", key),
                    f"{who}: input {key!r} of {label} must be one of {options}, got {value!r:.40}",
                )
        missing = [n for n in required if n not in case.inputs]
        if missing:
            where: YamlPath = (*base, "inputs") if "inputs" in case.model_fields_set else base
            problems.add(
                where,
                f"{who} does not give the required input(s) {', '.join(map(repr, missing))} "
                f"of {label}; add them under `inputs:`",
                key="inputs" in case.model_fields_set,
            )
        if case.cassette is not None and case.responses:
            problems.add(
                (*base, "cassette"),
                f"{who} names both `cassette:` and `responses:`; a case answers its oracles "
                "from one of them — drop `responses:` to replay the cassette",
                key=True,
            )
        elif case.cassette is not None and not case.cassette.strip():
            problems.add((*base, "cassette"), f"{who}: `cassette:` is an empty path")
        for key in case.responses:
            if key not in ritual.oracles:
                problems.add(
                    (*base, "responses", key),
                    f"{who}: {label} has no oracle {key!r} to script"
                    f"{did_you_mean(key, ritual.oracles)}",
                    key=True,
                )
        for number, update in enumerate(case.resume):
            for key in update:
                if key not in conduits:
                    problems.add(
                        (*base, "resume", number, key),
                        f"{who}: {label} has no conduit {key!r} to resume with"
                        f"{did_you_mean(key, conduits)}",
                        key=True,
                    )
        for key in case.expect.aether:
            if key not in conduits:
                problems.add(
                    (*base, "expect", "aether", key),
                    f"{who}: {label} has no conduit {key!r}{did_you_mean(key, conduits)}",
                    key=True,
                )


RecordMode = Literal["all", "missing"] | None
"""``sanctum test --record`` (all) / ``--record-missing`` (missing), or None: replay."""


def case_cassette(file: str, case: RitualTestCase, record: RecordMode) -> Any:
    """The recorder or player of a ``cassette:`` case (None without one).

    Raises:
        CassetteError: If a cassette to replay is missing or malformed.
    """
    if case.cassette is None:
        return None
    from sanctum.oracle.cassette import CassettePlayer, CassetteRecorder

    path = Path(file).parent / case.cassette
    if record == "all" or (record == "missing" and not path.exists()):
        return CassetteRecorder(path, command="test", invocation=case.name)
    if not path.exists():
        from sanctum.errors import CassetteError

        raise CassetteError(
            f"the cassette {path} does not exist; record it against the real oracles with "
            f"`sanctum test --record-missing {file}`",
            path=str(path),
        )
    return CassettePlayer(path)


def judge(
    case: RitualTestCase, status: str, error: str, aether: Mapping[str, Any], reasons: list[str]
) -> list[str]:
    """What a case's ``expect:`` finds wrong with how it ended (empty: it passed)."""
    expect = case.expect
    failures = []
    if status != expect.status:
        detail = f" ({error})" if error else ""
        failures.append(f"expected status {expect.status}, got {status}{detail}")
    for key, value in expect.aether.items():
        if key not in aether:
            failures.append(f"aether has no {key!r}")
        elif aether[key] != value:
            failures.append(f"aether[{key!r}] is {aether[key]!r}, expected {value!r}")
    for index, text in enumerate(expect.interrupts):
        if index >= len(reasons):
            failures.append(f"expected interrupt {index + 1} ({text!r}) never came")
        elif text not in reasons[index]:
            failures.append(f"interrupt {index + 1} said {reasons[index]!r}, expected {text!r}")
    if expect.error is not None and expect.error not in error:
        failures.append(f"error {error!r} does not contain {expect.error!r}")
    return failures


def case_oracles(case: RitualTestCase) -> dict[str, OracleOverride]:
    """The scripted oracles a case's ``responses:`` ask for, as overrides by name."""
    return {
        name: OracleOverride(provider="scripted", model="scripted", responses=lines)
        for name, lines in case.responses.items()
    }


def check_test_files(files: Sequence[str | Path]) -> None:
    """Read test files (and the rituals they name) strictly, before running any case.

    A malformed test file is bad input, not a failing test: every problem of every
    file is reported at once, each as ``path:line:column: message``.

    Raises:
        RitualFileError: If a test file is malformed or no regular file, names a ritual
            file that does not exist or is no regular file, or that ritual file is
            malformed.
    """
    from sanctum.ritualfile.compiler import load_ritual

    problems: list[FileProblem] = []
    for item in files:
        file = Path(item)
        special = _special_problem(file, "test file")
        if special is not None:  # one found in a folder: reading it would never end
            problems.append(special)
            continue
        try:
            spec = load_test_file(file)
        except RitualFileError as exc:
            problems.extend(exc.problems)
            continue
        ritual = file.parent / spec.ritual
        special = _special_problem(ritual, "ritual file")
        if special is not None:
            problems.append(special)
            continue
        if not ritual.is_file():
            line, column = load_yaml_file(file).position(("ritual",))
            message = f"ritual: no such file {ritual} (the path is relative to the test file)"
            problems.append(FileProblem(str(file), line, column, message))
            continue
        try:
            load_ritual(ritual)
        except RitualFileError as exc:
            problems.extend(exc.problems)
    if problems:
        raise RitualFileError(problems)


def _special_problem(path: Path, what: str) -> FileProblem | None:
    kind = special_file_kind(path)
    if kind is None:
        return None
    return FileProblem(str(path), 1, 1, f"cannot read the {what}: it is {kind}, not a regular file")


def no_cases_result(file: Path) -> TestResult:
    """A failed result for a test file whose ``cases:`` list is empty.

    Validating such a file passes (it is well formed), but running it tests nothing,
    which a test run must not report as a success.
    """
    line, column = load_yaml_file(file, what="test file").position(("cases",))
    message = (
        f"{file}:{line}:{column}: the `cases` list is empty, so nothing was tested; "
        "add a case (e.g. `- name: greets Ada` with its `inputs:` and `expect:`)"
    )
    return TestResult(str(file), file.name, False, message, "failed")
