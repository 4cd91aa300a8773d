"""The Builder: turns a checked RitualSpec into a Ritual, one sigil kind at a time.

Private to :mod:`sanctum.ritualfile`. The Builder holds what the sigil kinds need to
build their sigil functions (oracles, tomes, spells, callables, compiled expressions
and templates, secrets, inner Wards); each kind's compile step lives with the kind in
:mod:`sanctum.ritualfile.kinds`. :func:`sanctum.ritualfile.compiler.compile_ritual`
drives it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sanctum.aether import AetherSchema, Conduit, add, append, merge_dict, overwrite
from sanctum.oracle.base import Oracle
from sanctum.ritual import END, Rite, Ritual, SigilPolicy, exponential_backoff
from sanctum.ritual.kinds import first_match_router
from sanctum.ritualfile.checks import END_NAMES, exception_class
from sanctum.ritualfile.diagnostics import Problems
from sanctum.ritualfile.expressions import compile_expression, compile_template
from sanctum.ritualfile.kinds import kind_of, placeholder
from sanctum.ritualfile.loader import LoadedFile, YamlPath
from sanctum.ritualfile.models import (
    OracleSpec,
    PolicySpec,
    RedactWardSpec,
    RitualSpec,
    ScriptedOracleSpec,
)
from sanctum.ritualfile.resolve import (
    ResolveError,
    build_oracle,
    confine,
    import_callable,
    limited_oracle,
    scripted_oracle,
)
from sanctum.wards.base import Ward
from sanctum.wards.secrets import Secrets

__all__ = ["Builder", "RitualSource"]

_REDUCERS = {"overwrite": overwrite, "append": append, "add": add, "merge_dict": merge_dict}


@dataclass
class RitualSource:
    """Where a RitualSpec came from: its file, positions, secrets and circle files."""

    path: Path
    loaded: LoadedFile
    root: Path
    secrets: list[str] = field(default_factory=list)
    circles: dict[str, RitualSpec] = field(default_factory=dict)


class Builder:
    """Builds one Ritual from a checked RitualSpec.

    Args:
        spec: The checked model (from ``load_ritual``).
        source: Where it came from (positions, secrets, circle files).
        resolve: Import user code and build Oracles; else placeholders stand in.
        oracles: Oracles by name replacing the file's entries.
        env: Environment for ``${VAR}`` of circle files (default ``os.environ``).
        compile_inner: ``compile_ritual``, for the Rites of circle files (passed in, so
            this module does not import the compiler back).
    """

    def __init__(
        self,
        spec: RitualSpec,
        source: RitualSource,
        *,
        resolve: bool,
        oracles: Mapping[str, Oracle],
        env: Mapping[str, str] | None,
        compile_inner: Callable[..., Rite],
    ) -> None:
        self.spec = spec
        self._compile_inner = compile_inner
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
        self.owned: list[Any] = []
        """What the compiled Rite must close: the Oracles and Circle Rites built here."""
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
        """The oracle ``name``, wrapped in a FallbackOracle when its entry names a chain.

        The chain is :meth:`chain`'s: ``name``, then the depth-first expansion of the
        ``fallback:`` lists, each oracle once. An override (``--oracle``, ``oracles=``)
        replaces the entry it names and keeps its place in the chain.
        """
        names = self.chain(name)
        built: list[Oracle] = []
        for member in names:
            if member != name and member not in self.spec.oracles:
                self.problems.add(
                    ("oracles", name, "fallback"),
                    f"oracle {name!r}: its fallback chain names {member!r}, which is not "
                    "under `oracles:`; name other oracles of the file",
                )
                return None
            oracle = self._one_oracle(member, sigil)
            if oracle is None:
                return None
            built.append(oracle)
        if len(built) == 1:
            return built[0]
        from sanctum.oracle.fallback import FallbackOracle

        return FallbackOracle(*built, names=names)

    def chain(self, name: str) -> list[str]:
        """The names of ``name``'s fallback chain, ``name`` first.

        The depth-first expansion of the ``fallback:`` lists: ``x: {fallback: [y]}``
        and ``y: {fallback: [z]}`` give ``[x, y, z]``. Each oracle stands once: a name
        met again (a cycle such as ``a → b → a``, or a repeat) is cut, so every oracle
        of the file keeps its own chain. Names not under ``oracles:`` are kept, for
        the caller to report.
        """
        names: list[str] = []

        def visit(current: str) -> None:
            if current in names:
                return
            names.append(current)
            entry = self.spec.oracles.get(current)
            for other in getattr(entry, "fallback", None) or ():
                visit(other)

        visit(name)
        return names

    def _one_oracle(self, name: str, sigil: str) -> Oracle | None:
        if name in self.overrides:
            return self.overrides[name]
        spec: OracleSpec = self.spec.oracles[name]
        if isinstance(spec, ScriptedOracleSpec) and isinstance(spec.responses, dict):
            return limited_oracle(scripted_oracle(spec, sigil), spec)
        if name not in self._oracles:
            if not self.resolve and not isinstance(spec, ScriptedOracleSpec):
                return None
            try:
                self._oracles[name] = limited_oracle(build_oracle(spec, self.folder), spec)
                self.owned.append(self._oracles[name])
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
                if self.cassette is not None:  # spells with outside effects: recorded
                    from sanctum.grimoire.recorded import recorded_tome

                    self._tomes[name] = recorded_tome(self._tomes[name], self.cassette)
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
            return placeholder
        try:
            return import_callable(reference, self.folder)
        except ResolveError as exc:
            self.problems.add(path, f"call: {exc}")
            return placeholder

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
        """The sigil function of one sigil, built by its kind's compile step.

        The grimoire (oracle, agent and spell sigils) is imported only by the kinds that
        need it: a ritual of set/call/interrupt sigils never loads it.
        """
        return kind_of(sigil).compile(self, name, sigil)

    def circle_rite(self, name: str) -> Rite:
        """The compiled Rite of the circle file sigil ``name`` mounts (loaded already).

        It is compiled as this ritual is (oracles, resolve, environment, secrets), with
        the masking Wards of :meth:`inner_wards` and the cassette scoped to the circle.

        Raises:
            RitualFileError: For a problem found while compiling the circle's graph.
        """
        rite = self._compile_inner(
            self.source.circles[name],
            oracles=self.overrides,
            resolve=self.resolve,
            env=self.env,
            wards=self.inner_wards(),
            secrets=self.secrets,
            cassette=None if self.cassette is None else self.cassette.scoped(name),
        )
        self.owned.append(rite)
        return rite

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


def _constant(value: Any) -> Callable[[Mapping[str, Any]], Any]:
    import copy

    return lambda aether: copy.deepcopy(value)
