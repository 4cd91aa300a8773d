"""Sealing a ritual file into a Rite, through the engine's public API only.

:func:`load_ritual` reads and checks a file (strict YAML, the pydantic model, names,
expressions, circle files); :func:`compile_ritual` builds the Ritual — every sigil kind
through a public factory (``set_sigil``, ``interrupt_sigil``, ``oracle_sigil``,
``agent_sigil``, ``spell_sigil``, ``circle``, ``scatter``) — and compiles it into a
Rite; :func:`check_ritual` does both without running user code, for ``sanctum
validate``. Every problem is a ``path:line:column: message`` in a RitualFileError.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sanctum.codex.base import Codex
from sanctum.errors import FileProblem, RitualFileError, RitualValidationError
from sanctum.oracle.base import Oracle
from sanctum.ritual import Rite
from sanctum.ritualfile._builder import Builder, RitualSource
from sanctum.ritualfile.checks import Checker
from sanctum.ritualfile.diagnostics import Problems
from sanctum.ritualfile.env import looks_secret
from sanctum.ritualfile.kinds.circle import CircleSigil
from sanctum.ritualfile.loader import LoadedFile, YamlPath, load_yaml_file
from sanctum.ritualfile.models import RedactWardSpec, RitualSpec
from sanctum.ritualfile.resolve import (
    ResolveError,
    build_ward,
    confine,
    open_codex_url,
    project_root,
    secret_masker,
)
from sanctum.ritualfile.shape import FORMAT_VERSION, validate_shape
from sanctum.ritualfile.topology import check_topology, place
from sanctum.wards.base import Ward
from sanctum.wards.secrets import Secrets

__all__ = ["FORMAT_VERSION", "RitualSource", "check_ritual", "compile_ritual", "load_ritual"]


# --------------------------------------------------------------------------- loading


def public_names(loaded: LoadedFile) -> set[str]:
    """The variable names the file's ``public:`` list marks as not secret (as written)."""
    listed = loaded.data.get("public") if isinstance(loaded.data, dict) else None
    if not isinstance(listed, list):
        return set()
    return {name for name in listed if isinstance(name, str)}


def _secrets(loaded: LoadedFile) -> list[str]:
    """Every value the file must never show: api keys and ``${VAR}`` values.

    A ``${VAR}`` value read from the environment is secret unless ``public:`` names the
    variable (or its name looks secret: then even ``public:`` cannot clear it); a
    default written in the file (``${VAR:-text}``) is no secret, being in the file.
    """
    found = []
    public = public_names(loaded)
    oracles = loaded.data.get("oracles") if isinstance(loaded.data, dict) else None
    if isinstance(oracles, dict):  # literal keys too, even of an oracle that is broken
        for body in oracles.values():
            key = body.get("api_key") if isinstance(body, dict) else None
            if isinstance(key, str) and key:
                found.append(key)
    for path, done in loaded.interpolations.items():
        credential = len(path) == 3 and path[0] == "oracles" and path[2] == "api_key"
        for item in done:
            if not item.value:
                continue
            read = not item.from_default and item.name not in public
            if credential or looks_secret(item.name) or read:
                found.append(item.value)
        if credential and isinstance(_at(loaded.data, path), str):
            found.append(_at(loaded.data, path))
    return found


def _at(data: Any, path: YamlPath) -> Any:
    for part in path:
        data = data[part]
    return data


def load_ritual(
    path: str | Path,
    *,
    env: Mapping[str, str] | None = None,
    _chain: tuple[Path, ...] = (),
) -> RitualSpec:
    """Read and check a ritual file.

    Reads the strict YAML subset, substitutes ``${VAR}``, validates the model, and checks
    names, references, expressions, templates, tome folders and circle files (loaded
    recursively; cycles of files are an error). Imports no user code.

    Args:
        path: The ritual file.
        env: Environment for ``${VAR}`` (default ``os.environ``).

    Returns:
        The RitualSpec.

    Raises:
        RitualFileError: With every problem found, each ``path:line:column: message``.
    """
    file = Path(path)
    loaded = load_yaml_file(file, env=env)
    problems = Problems(loaded, _secrets(loaded))
    spec, dropped = validate_shape(loaded, problems)
    if spec is None:
        problems.raise_if_any()
        raise AssertionError("validate_shape gave no spec and no problem")  # pragma: no cover
    secrets = list(problems.secrets)
    for oracle in spec.oracles.values():
        key = getattr(oracle, "api_key", None)
        if key:
            secrets.append(key)
    problems.secrets.update(secrets)
    root = project_root(file, spec.project)
    folder = file.resolve().parent
    Checker(spec, problems, folder, root, dropped=dropped).run()
    source = RitualSource(file, loaded, root, sorted(set(secrets)))
    elsewhere: list[FileProblem] = []
    chain = (*_chain, file.resolve())
    for name, sigil in spec.sigils.items():
        if not isinstance(sigil, CircleSigil):
            continue
        where = ("sigils", name, "circle")
        try:
            target = confine(folder, sigil.circle, root, "circle file")
        except ResolveError as exc:
            problems.add(where, str(exc))
            continue
        if target in chain:
            shown = " -> ".join(p.name for p in (*chain, target))
            problems.add(where, f"circle files form a cycle: {shown}")
            continue
        if target.is_dir():
            problems.add(
                where,
                f"circle {sigil.circle!r} is a folder ({target}); name a ritual file in it, "
                "e.g. `circle: parts/step.yaml`",
            )
            continue
        if not target.is_file():
            problems.add(where, f"circle file {sigil.circle!r} does not exist ({target})")
            continue
        try:
            source.circles[name] = load_ritual(target, env=env, _chain=chain)
        except RitualFileError as exc:
            problems.add(where, f"circle file {sigil.circle!r} has problems (see below)")
            elsewhere.extend(exc.problems)
    if problems or elsewhere:
        raise RitualFileError([*problems.sorted(), *elsewhere])
    spec._source = source
    return spec


# --------------------------------------------------------------------------- compiling


def _engine_problem(exc: RitualValidationError, builder: Builder) -> RitualFileError:
    """An engine refusal the file checks did not foresee, worded and placed by its code."""
    for problem in exc.problems:
        place(problem, builder.spec, builder.problems)
    return RitualFileError(builder.problems.sorted())


def compile_ritual(
    spec_or_path: RitualSpec | str | Path,
    *,
    codex: Codex | None = None,
    wards: Sequence[Ward] | None = None,
    oracles: Mapping[str, Oracle] | None = None,
    recursion_limit: int | None = None,
    resolve: bool = True,
    env: Mapping[str, str] | None = None,
    secrets: Secrets | None = None,
    cassette: Any = None,
) -> Rite:
    """Seal a ritual file into a Rite.

    Rite — the compiled graph. Builds the Ritual through public factories and compiles
    it, with the file's ``wards:`` then ``wards`` given here. The Rite masks the file's
    secrets (:func:`ritual_secrets`: every ``${VAR}`` read from the environment unless
    ``public:`` lists it, oracle ``api_key`` values, the patterns of ``redact:`` wards,
    the password of its ``codex:`` URL) together with ``secrets`` given here, in every
    delta, Seal, Omen and error message of its runs.

    Args:
        spec_or_path: A RitualSpec from :func:`load_ritual`, or a ritual file path.
        codex: Seal store; overrides the file's ``codex:`` URL.
        wards: Extra Wards appended after the file's.
        oracles: Oracles by name, replacing the file's entries (e.g. ScriptedOracles
            in tests).
        recursion_limit: Overrides the file's ``recursion_limit``.
        resolve: Import user code (``call`` sigils, ``module:function`` reducers,
            spell folders) and build Oracles. With ``False`` placeholders stand in, so
            the graph can be checked without running anything from the file.
        env: Environment for ``${VAR}`` when a path is given (default ``os.environ``).
        secrets: More values and patterns to mask (a ``Secrets``), e.g. the password of
            the codex URL a command line was given.
        cassette: A ``sanctum.oracle.cassette.CassetteRecorder`` (every Oracle call
            of every sigil is recorded, masked with the Rite's secrets) or a
            ``CassettePlayer`` (every call is answered from the cassette; the file's
            oracles are never built, so no server is contacted). Calls are keyed by
            oracle name and sigil (``circle/sigil`` inside a Circle).

    Returns:
        The compiled Rite. It owns the Oracles (and Circle Rites) built from the file:
        ``await rite.aclose()`` releases their HTTP connections when done with it.

    Raises:
        RitualFileError: For any problem in the file, in a circle file, or found while
            resolving names or compiling the graph.
        TypeError: If ``secrets`` is not a Secrets.
    """
    spec = (
        spec_or_path if isinstance(spec_or_path, RitualSpec) else load_ritual(spec_or_path, env=env)
    )
    source: RitualSource | None = spec._source
    if source is None:
        raise TypeError("compile_ritual needs a RitualSpec from load_ritual (it carries positions)")
    if secrets is not None and not isinstance(secrets, Secrets):
        raise TypeError(f"secrets must be a sanctum Secrets, got {type(secrets).__name__}")
    builder = Builder(
        spec, source, resolve=resolve, oracles=oracles or {}, env=env, compile_inner=compile_ritual
    )
    builder.secrets = ritual_secrets(spec) | secrets
    if cassette is not None:
        cassette.add_secrets(builder.secrets)
        builder.cassette = cassette
    try:
        ritual = builder.ritual()
    except RitualValidationError as exc:
        raise _engine_problem(exc, builder) from None
    file_wards: list[Ward] = []
    redact = trace_redaction(spec)
    file_wards += [build_ward(w, redact) for w in spec.wards] if resolve else []
    store = codex
    if store is None and spec.codex is not None and resolve:
        try:
            store = open_codex_url(spec.codex)
        except (ResolveError, ImportError) as exc:
            builder.problems.add(("codex",), f"codex: {exc}")
    # The engine's graph checks, in the file's words and at the place to fix (the file
    # passed its name checks, so an unreachable sigil is no follow-on of a typo).
    check_topology(spec, builder.problems)
    builder.problems.raise_if_any()
    try:
        rite = ritual.compile(
            recursion_limit=recursion_limit or spec.recursion_limit,
            codex=store,
            default_policy=builder.policy(spec.default_policy),
            wards=[*file_wards, *(wards or [])],
            secrets=builder.secrets,
        )
    except RitualValidationError as exc:
        raise _engine_problem(exc, builder) from None
    return rite.with_options(owns=builder.owned) if builder.owned else rite


def ritual_secrets(spec: RitualSpec) -> Secrets:
    """Everything a ritual file's runs must never show, as one masking policy.

    The values of the file's secrets (every ``${VAR}`` read from the environment
    unless ``public:`` lists it, oracle ``api_key`` values), the patterns of its
    ``redact:`` wards (each with its mask), the password of its ``codex:`` URL, and the
    same of its circle files.

    Args:
        spec: A RitualSpec from :func:`load_ritual`.

    Returns:
        The Secrets (empty, and falsy, when there is nothing to mask).
    """
    source: RitualSource | None = spec._source
    secrets = Secrets(
        source.secrets if source is not None else (),
        urls=[spec.codex] if spec.codex else (),
    )
    for entry in spec.wards:
        if isinstance(entry, RedactWardSpec):
            secrets = secrets | Secrets(patterns=entry.redact.patterns, mask=entry.redact.mask)
    for inner in source.circles.values() if source is not None else ():
        secrets = secrets | ritual_secrets(inner)
    return secrets


def trace_redaction(spec: RitualSpec) -> Callable[[Any], Any] | None:
    """What a trace of this ritual is passed through before it is written.

    Omens that never cross the Ward pipeline (writer tokens, raw spell-call text, the
    input kept in the final Aether) reach a TraceRecorder unmasked; this masks them as
    the ritual's own Wards mask deltas: the file's secrets (oracle ``api_key`` values
    and secret-looking ``${...}`` variables) and the patterns of its ``redact:`` wards.
    Used for a ``trace:`` ward and for ``sanctum run --trace``.

    Args:
        spec: A RitualSpec from :func:`load_ritual`.

    Returns:
        A function of any JSON-like value, or None when there is nothing to mask.
    """
    from sanctum.wards.redact import RedactWard

    steps: list[Callable[[Any], Any]] = []
    source: RitualSource | None = spec._source
    if source is not None and source.secrets:
        steps.append(secret_masker(source.secrets))
    for entry in spec.wards:
        if isinstance(entry, RedactWardSpec):
            steps.append(RedactWard(entry.redact.patterns, mask=entry.redact.mask).redact)
    if not steps:
        return None

    def redact(value: Any) -> Any:
        for step in steps:
            value = step(value)
        return value

    return redact


def check_ritual(
    path: str | Path, *, resolve: bool = False, env: Mapping[str, str] | None = None
) -> list[FileProblem]:
    """Find every problem in a ritual file, for ``sanctum validate``.

    Loads the file and compiles its graph with placeholders (``resolve=False``: no user
    code is imported, no Oracle built) or for real (``resolve=True``).

    Args:
        path: The ritual file.
        resolve: Also import ``call`` callables, reducers and spell folders.
        env: Environment for ``${VAR}`` (default ``os.environ``).

    Returns:
        The problems, in file order; empty when the file is sound.
    """
    try:
        spec = load_ritual(path, env=env)
        compile_ritual(spec, resolve=resolve, env=env, codex=None)
    except RitualFileError as exc:
        return list(exc.problems)
    return []
