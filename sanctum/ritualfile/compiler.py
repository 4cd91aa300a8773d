"""Sealing a ritual file into a Rite, through the engine's public API only.

:func:`load_ritual` reads and checks a file (strict YAML, the pydantic model, names,
expressions, circle files); :func:`compile_ritual` builds the Ritual — every sigil kind
through a public factory (``set_sigil``, ``interrupt_sigil``, ``oracle_sigil``,
``agent_sigil``, ``spell_sigil``, ``circle``, ``scatter``) — and compiles it into a
Rite; :func:`check_ritual` does both without running user code, for ``sanctum
validate``. Every problem is a ``path:line:column: message`` in a RitualFileError.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sanctum.aether import AetherSchema, Conduit, add, append, merge_dict, overwrite
from sanctum.codex.base import Codex
from sanctum.errors import ExpressionError, FileProblem, RitualFileError, RitualValidationError
from sanctum.oracle.base import Oracle
from sanctum.ritual import (
    END,
    Rite,
    Ritual,
    SigilPolicy,
    circle,
    exponential_backoff,
    scatter,
)
from sanctum.ritual.kinds import first_match_router, interrupt_sigil, set_sigil
from sanctum.ritualfile.checks import END_NAMES, Checker, exception_class
from sanctum.ritualfile.diagnostics import Problems
from sanctum.ritualfile.env import looks_secret
from sanctum.ritualfile.expressions import compile_expression, compile_template
from sanctum.ritualfile.loader import LoadedFile, YamlPath, load_yaml_file
from sanctum.ritualfile.models import (
    AgentSigil,
    CallSigil,
    CircleSigil,
    InlineCall,
    InlineOracle,
    InlineSet,
    InlineSpell,
    InterruptSigil,
    OracleSigil,
    OracleSpec,
    PolicySpec,
    RedactWardSpec,
    RitualSpec,
    ScatterSigil,
    ScriptedOracleSpec,
    SetSigil,
    SpellSigil,
)
from sanctum.ritualfile.resolve import (
    ResolveError,
    build_oracle,
    build_ward,
    confine,
    import_callable,
    open_codex_url,
    project_root,
    scripted_oracle,
    secret_masker,
)
from sanctum.ritualfile.shape import FORMAT_VERSION, validate_shape
from sanctum.ritualfile.topology import check_topology, file_wording
from sanctum.wards.base import Ward
from sanctum.wards.secrets import Secrets

__all__ = ["FORMAT_VERSION", "RitualSource", "check_ritual", "compile_ritual", "load_ritual"]

_REDUCERS = {"overwrite": overwrite, "append": append, "add": add, "merge_dict": merge_dict}


@dataclass
class RitualSource:
    """Where a RitualSpec came from: its file, positions, secrets and circle files."""

    path: Path
    loaded: LoadedFile
    root: Path
    secrets: list[str] = field(default_factory=list)
    circles: dict[str, RitualSpec] = field(default_factory=dict)


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


def _placeholder(aether: Mapping[str, Any]) -> dict[str, Any]:
    return {}


class _Builder:
    """Builds one Ritual from a checked RitualSpec."""

    def __init__(
        self,
        spec: RitualSpec,
        source: RitualSource,
        *,
        resolve: bool,
        oracles: Mapping[str, Oracle],
        env: Mapping[str, str] | None,
    ) -> None:
        self.spec = spec
        self.source = source
        self.resolve = resolve
        self.overrides = dict(oracles)
        self.env = env
        self.folder = source.path.resolve().parent
        self.problems = Problems(source.loaded, source.secrets)
        self.secrets = Secrets(source.secrets)
        """What the Rite masks: the file's secrets, the caller's, the redact patterns."""
        self.defaults: dict[str, Any] = {
            name: value.default
            for name, value in spec.inputs.items()
            if "default" in value.model_fields_set
        }
        self.defaults.update(
            (name, value.default)
            for name, value in spec.aether.items()
            if "default" in value.model_fields_set
        )
        self._oracles: dict[str, Oracle] = {}
        self.cassette: Any = None
        """A CassetteRecorder or CassettePlayer (or a Circle's view of one), or None."""
        self._tomes: dict[str, Any] = {}
        self.reducers: dict[str, str] = {n: c.reducer for n, c in spec.aether.items()}

    # ------------------------------------------------------------------ pieces

    def context(self, aether: Mapping[str, Any]) -> dict[str, Any]:
        """The names expressions see: conduit defaults under the live Aether.

        A fresh run already starts with every default (they are Conduit defaults, see
        :meth:`schema`); this keeps them visible when resuming a Seal written before a
        default was added to the file, or by an older sanctum that did not seed them.
        """
        return {**self.defaults, **aether} if self.defaults else dict(aether)

    def schema(self) -> AetherSchema:
        # Defaults (of inputs and conduits) become Conduit defaults: a fresh Invocation
        # starts with them, so Python sigils, Seals and the final Aether see them too.
        conduits: dict[str, Conduit] = {
            name: Conduit(default=self.defaults[name]) if name in self.defaults else Conduit()
            for name in self.spec.inputs
        }
        for name, conduit in self.spec.aether.items():
            reducer = _REDUCERS.get(conduit.reducer)
            if reducer is None:
                reducer = overwrite
                if self.resolve:
                    try:
                        reducer = import_callable(conduit.reducer, self.folder)
                    except ResolveError as exc:
                        self.problems.add(("aether", name, "reducer"), f"reducer: {exc}")
            if name in self.defaults:
                conduits[name] = Conduit(reducer=reducer, default=self.defaults[name])
            else:
                conduits[name] = Conduit(reducer=reducer)
        return AetherSchema(conduits)

    def oracle(self, name: str, sigil: str) -> Oracle | None:
        if self.cassette is not None and self.resolve:
            from sanctum.oracle.cassette import cassette_oracle

            spec = self.spec.oracles[name]
            return cassette_oracle(
                self.cassette,
                name=name,
                sigil=sigil,
                build=lambda: self._oracle(name, sigil),
                provider=None if name in self.overrides else spec.provider,
                model=None if name in self.overrides else spec.model,
            )
        return self._oracle(name, sigil)

    def _oracle(self, name: str, sigil: str) -> Oracle | None:
        if name in self.overrides:
            return self.overrides[name]
        spec: OracleSpec = self.spec.oracles[name]
        if isinstance(spec, ScriptedOracleSpec) and isinstance(spec.responses, dict):
            return scripted_oracle(spec, sigil)
        if name not in self._oracles:
            if not self.resolve and not isinstance(spec, ScriptedOracleSpec):
                return None
            try:
                self._oracles[name] = build_oracle(spec, self.folder)
            except ResolveError as exc:
                self.problems.add(("oracles", name), f"oracle {name!r}: {exc}", key=True)
                return None
        return self._oracles[name]

    def tome(self, name: str) -> Any:
        if name not in self._tomes:
            from sanctum.grimoire.tome import Tome

            folder = confine(self.folder, self.spec.tomes[name].path, self.source.root, "tome")
            try:
                self._tomes[name] = Tome.load_from_directory(folder)
            except ValueError as exc:
                self.problems.add(("tomes", name, "path"), f"tome {name!r}: {exc}")
                self._tomes[name] = None
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # a spell module calling sys.exit() at import
                self.problems.add(("tomes", name, "path"), f"tome {name!r}: {_exit_text(exc)}")
                self._tomes[name] = None
        return self._tomes[name]

    def spell(self, path: YamlPath, spell: str, tome: str | None) -> Any:
        names = [tome] if tome is not None else list(self.spec.tomes)
        broken = False
        for name in names:
            loaded = self.tome(name)
            if loaded is not None and spell in loaded:
                return loaded.get(spell)
            broken = broken or loaded is None
        if not broken:  # a tome that failed to load is reported already
            self.problems.add(path, f"spell {spell!r} is in no tome")
        return None

    def call(self, path: YamlPath, reference: str) -> Callable[..., Any]:
        if not self.resolve:
            return _placeholder
        try:
            return import_callable(reference, self.folder)
        except ResolveError as exc:
            self.problems.add(path, f"call: {exc}")
            return _placeholder

    def policy(self, ref: PolicySpec | str | None) -> SigilPolicy | None:
        if ref is None:
            return None
        spec = self.spec.policies[ref] if isinstance(ref, str) else ref
        backoff = spec.backoff
        retry_on: tuple[type[BaseException], ...] = tuple(
            cls for cls in (exception_class(n) for n in spec.retry_on or []) if cls is not None
        )
        on_error = spec.on_error
        return SigilPolicy(
            timeout=spec.timeout,
            retries=spec.retries,
            backoff=exponential_backoff(backoff.base, backoff.cap, backoff.jitter)
            if backoff is not None
            else exponential_backoff(),
            retry_on=retry_on or (Exception,),
            on_error=on_error,
        )

    # ------------------------------------------------------------------ expressions

    def done(self, path: YamlPath) -> Any:
        """The ``${VAR}`` substitutions made in the value at ``path`` (bound as data)."""
        return self.source.loaded.interpolations.get(path)

    def expr(
        self, source: str, sigil: str, where: str, path: YamlPath
    ) -> Callable[[Mapping[str, Any]], Any]:
        compiled = compile_expression(source, sigil=sigil, field=where, done=self.done(path))
        return lambda aether: compiled.evaluate(self.context(aether))

    def cond(
        self, source: str, sigil: str, where: str, path: YamlPath
    ) -> Callable[[Mapping[str, Any]], bool]:
        compiled = compile_expression(source, sigil=sigil, field=where, done=self.done(path))
        return lambda aether: compiled.condition(self.context(aether))

    def text(self, source: str, sigil: str, where: str) -> Callable[[Mapping[str, Any]], str]:
        done = self.done(("sigils", sigil, *where.split(".")))
        compiled = compile_template(source, sigil=sigil, field=where, done=done)
        return lambda aether: compiled.render(self.context(aether))

    def values(
        self, values: Mapping[str, Any], sigil: str, where: str, path: YamlPath
    ) -> dict[str, Callable[[Mapping[str, Any]], Any]]:
        out: dict[str, Callable[[Mapping[str, Any]], Any]] = {}
        for key, value in values.items():
            if isinstance(value, str):
                out[key] = self.expr(value, sigil, f"{where}.{key}", (*path, key))
            else:
                out[key] = _constant(value)
        return out

    def arguments(
        self, arguments: Mapping[str, Any], sigil: str, path: YamlPath
    ) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
        def build(value: Any, where: str, at: YamlPath) -> Callable[[Mapping[str, Any]], Any]:
            if isinstance(value, str):
                compiled = compile_template(value, sigil=sigil, field=where, done=self.done(at))
                return lambda aether: compiled.value(self.context(aether))
            if isinstance(value, dict):
                parts = {k: build(v, f"{where}.{k}", (*at, k)) for k, v in value.items()}
                return lambda aether: {k: fn(aether) for k, fn in parts.items()}
            if isinstance(value, list):
                items = [build(v, f"{where}[{i}]", (*at, i)) for i, v in enumerate(value)]
                return lambda aether: [fn(aether) for fn in items]
            return _constant(value)

        fns = {
            key: build(value, f"arguments.{key}", (*path, key)) for key, value in arguments.items()
        }
        return lambda aether: {key: fn(aether) for key, fn in fns.items()}

    # ------------------------------------------------------------------ sigils

    def sigil_fn(self, name: str, sigil: Any) -> Callable[..., Any]:
        # The grimoire (oracle, agent and spell sigils) is imported only by the kinds
        # that need it: a ritual of set/call/interrupt sigils never loads it.
        base: YamlPath = ("sigils", name)
        if isinstance(sigil, CallSigil):
            return self.call((*base, "call"), sigil.call)
        if isinstance(sigil, OracleSigil):
            oracle = self.oracle(sigil.oracle, name)
            if oracle is None:
                return _placeholder
            from sanctum.grimoire.sigils import oracle_sigil

            return oracle_sigil(
                oracle,
                self.text(sigil.prompt, name, "prompt"),
                sigil.output,
                system=None if sigil.system is None else self.text(sigil.system, name, "system"),
                stream_tokens=sigil.stream,
                messages=sigil.messages,
                append_output=self.reducers.get(sigil.output) == "append",
                scrub=self.secrets.mask if self.secrets else None,
                secrets=self.secrets or None,
            )
        if isinstance(sigil, AgentSigil):
            agent = sigil.agent
            oracle = self.oracle(agent.oracle, name)
            if oracle is None or not self.resolve:
                return _placeholder
            tome = self.tome(agent.tome) if agent.tome is not None else None
            from sanctum.grimoire.sigils import agent_sigil
            from sanctum.grimoire.summon import DEFAULT_ROLE

            return agent_sigil(
                oracle,
                tome,
                name=name,
                role=agent.role if agent.role is not None else DEFAULT_ROLE,
                spell_calling=agent.spell_calling,
                max_repair_rounds=agent.max_repair_rounds,
                recursion_limit=agent.recursion_limit,
                prompt=None if sigil.prompt is None else self.text(sigil.prompt, name, "prompt"),
                messages=sigil.messages,
                output=sigil.output,
                wards=self.inner_wards(),
            )
        if isinstance(sigil, SpellSigil):
            if not self.resolve:
                return _placeholder
            spell = self.spell((*base, "spell"), sigil.spell, sigil.tome)
            if spell is None:
                return _placeholder
            from sanctum.grimoire.sigils import spell_sigil

            return spell_sigil(
                spell, self.arguments(sigil.arguments, name, (*base, "arguments")), sigil.output
            )
        if isinstance(sigil, InterruptSigil):
            return interrupt_sigil(
                self.text(sigil.interrupt, name, "interrupt"),
                self.cond(sigil.until, name, "until", (*base, "until")),
            )
        if isinstance(sigil, SetSigil):
            return set_sigil(self.values(sigil.values, name, "set", (*base, "set")))
        if isinstance(sigil, CircleSigil):
            inner = self.source.circles[name]
            rite = compile_ritual(
                inner,
                oracles=self.overrides,
                resolve=self.resolve,
                env=self.env,
                wards=self.inner_wards(),
                secrets=self.secrets,
                cassette=None if self.cassette is None else self.cassette.scoped(name),
            )
            return circle(name, rite)
        if not isinstance(sigil, ScatterSigil):
            return _placeholder  # a pass sigil: it only routes
        options = sigil.scatter
        spread = scatter(
            self.inline(name, options.sigil, (*base, "scatter", "sigil")),
            self.items(options.over, name),
            into=options.into,
            item_key=options.item,
            max_concurrency=options.max_concurrency,
        )
        return (
            spread if options.pick is None else _picking(spread, name, options.into, options.pick)
        )

    def items(self, source: str, sigil: str) -> Callable[[Mapping[str, Any]], Any]:
        """``scatter.over``: the expression, whose value must be a list."""
        compiled = compile_expression(
            source,
            sigil=sigil,
            field="scatter.over",
            done=self.done(("sigils", sigil, "scatter", "over")),
        )

        def items(aether: Mapping[str, Any]) -> Any:
            value = compiled.evaluate(self.context(aether))
            if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
                raise ExpressionError(
                    f"sigil {sigil!r}: scatter.over `{compiled.source}` gave "
                    f"{type(value).__name__} {value!r:.60}, not a list to scatter over",
                    sigil=sigil,
                    expression=compiled.source,
                    field="scatter.over",
                )
            return value

        return items

    def inline(self, name: str, inline: Any, path: YamlPath) -> Callable[..., Any]:
        if isinstance(inline, InlineCall):
            return self.call((*path, "call"), inline.call)
        if isinstance(inline, InlineOracle):
            oracle = self.oracle(inline.oracle, name)
            if oracle is None:
                return _placeholder
            from sanctum.grimoire.sigils import oracle_sigil

            return oracle_sigil(
                oracle,
                self.text(inline.prompt, name, "scatter.sigil.prompt"),
                inline.output,
                system=None
                if inline.system is None
                else self.text(inline.system, name, "scatter.sigil.system"),
                stream_tokens=False,
                scrub=self.secrets.mask if self.secrets else None,
                secrets=self.secrets or None,
            )
        if isinstance(inline, InlineSpell):
            if not self.resolve:
                return _placeholder
            spell = self.spell((*path, "spell"), inline.spell, inline.tome)
            if spell is None:
                return _placeholder
            from sanctum.grimoire.sigils import spell_sigil

            return spell_sigil(
                spell, self.arguments(inline.arguments, name, (*path, "arguments")), inline.output
            )
        assert isinstance(inline, InlineSet)
        return set_sigil(self.values(inline.values, name, "scatter.sigil.set", (*path, "set")))

    def inner_wards(self) -> list[Ward]:
        """The masking Wards of a Circle's or an agent's inner Rite.

        Its Omens reach the outer stream as CircleEchoed, untouched (as the
        specification has it), past the outer Wards: the inner Rite masks its own
        deltas with the file's secrets and the patterns of the file's ``redact:`` wards.
        """
        wards = self.secret_wards()
        if not self.resolve:
            return wards
        from sanctum.wards.redact import RedactWard

        for entry in self.spec.wards:
            if isinstance(entry, RedactWardSpec):
                wards.append(RedactWard(entry.redact.patterns, mask=entry.redact.mask))
        return wards

    def secret_wards(self) -> list[Ward]:
        """A RedactWard over the file's (and the caller's) secrets, for an inner Rite."""
        if not self.secrets:
            return []
        return [self.secrets.ward()]

    # ------------------------------------------------------------------ the graph

    def ritual(self) -> Ritual:
        ritual = Ritual(self.schema())
        for name, sigil in self.spec.sigils.items():
            ritual.add_sigil(
                name, self.sigil_fn(name, sigil), self.policy(sigil.policy), join=sigil.join
            )
        for name, sigil in self.spec.sigils.items():
            if sigil.next is not None:
                for target in [sigil.next] if isinstance(sigil.next, str) else sigil.next:
                    ritual.add_edge(name, END if target in END_NAMES else target)
            elif sigil.routes:
                pairs = [
                    (
                        None
                        if route.when is None
                        else self.cond(
                            route.when,
                            name,
                            f"routes[{i}].when",
                            ("sigils", name, "routes", i, "when"),
                        ),
                        END if route.to in END_NAMES else route.to,
                    )
                    for i, route in enumerate(sigil.routes)
                ]
                targets: dict[Hashable, str] = {target: target for _, target in pairs}
                ritual.add_conditional_edge(name, first_match_router(pairs), targets)
        for entry in [self.spec.entry] if isinstance(self.spec.entry, str) else self.spec.entry:
            ritual.set_entry_point(entry)
        return ritual


def _exit_text(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        code = "" if exc.code is None else repr(exc.code)
        return f"a spell module called sys.exit({code}) while being imported"
    detail = f": {exc}" if str(exc) else ""
    return f"a spell module raised {type(exc).__name__}{detail} while being imported"


def _picking(
    spread: Callable[..., Awaitable[dict[str, Any]]], sigil: str, into: str, pick: str
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """A scatter sigil that keeps only key ``pick`` of each item's result.

    Raises (when run):
        ExpressionError: When an item's result has no such key, naming the keys it has.
    """

    @functools.wraps(spread)
    async def picked(aether: dict[str, Any], writer: Any) -> dict[str, Any]:
        delta = await spread(aether, writer)
        results = []
        for index, result in enumerate(delta[into]):
            if pick not in result:
                keys = ", ".join(repr(k) for k in result) or "none"
                raise ExpressionError(
                    f"sigil {sigil!r}: scatter.pick {pick!r}: the result of item {index} has "
                    f"no key {pick!r} (its keys: {keys}); pick one of them",
                    sigil=sigil,
                    expression=pick,
                    field="scatter.pick",
                )
            results.append(result[pick])
        return {into: results}

    return picked


def _constant(value: Any) -> Callable[[Mapping[str, Any]], Any]:
    import copy

    return lambda aether: copy.deepcopy(value)


def _engine_problem(exc: RitualValidationError, builder: _Builder) -> RitualFileError:
    """An engine refusal the file checks did not foresee, at the sigils it names."""
    problems = builder.problems
    message = f"the graph cannot be compiled: {file_wording(str(exc))}"
    named = [s for s in exc.sigils if s in builder.spec.sigils]
    if not named:
        problems.add(("sigils",), message, key=True)
    for sigil in named:
        problems.add(("sigils", sigil), message, key=True)
    return RitualFileError(problems.sorted())


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
        The compiled Rite.

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
    builder = _Builder(spec, source, resolve=resolve, oracles=oracles or {}, env=env)
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
        return ritual.compile(
            recursion_limit=recursion_limit or spec.recursion_limit,
            codex=store,
            default_policy=builder.policy(spec.default_policy),
            wards=[*file_wards, *(wards or [])],
            secrets=builder.secrets,
        )
    except RitualValidationError as exc:
        raise _engine_problem(exc, builder) from None


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
