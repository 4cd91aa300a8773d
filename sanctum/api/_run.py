"""Performing a ritual file: :func:`run` and :func:`resume`, each a straight line.

load → bind → open the store → compile → stream → result. The first four steps are
the setup a :class:`~sanctum.api._perform.Performance` awaits on its first step; the
setup returns what it made and writes into nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sanctum.api._cassettes import open_cassette
from sanctum.api._pending import approval_updates, spell_roles
from sanctum.api._perform import Performance, Staged, masked_setup
from sanctum.api._results import origin_of, resume_command
from sanctum.api._stores import OpenedStore, _describe_codex, open_store
from sanctum.errors import RitualFileError, SealError

if TYPE_CHECKING:
    from sanctum.codex.base import Codex, Seal
    from sanctum.oracle.base import Oracle
    from sanctum.ritual.mandate import Mandate
    from sanctum.ritualfile import OracleOverride, RitualFile
    from sanctum.wards.secrets import Secrets

__all__ = ["resume", "run"]

Overrides = Mapping[str, "OracleOverride | Oracle"]


def run(
    ritual: str | Path | RitualFile,
    inputs: Mapping[str, Any] | None = None,
    *,
    codex: Codex | str | None = None,
    invocation_id: str | None = None,
    trace_path: str | Path | None = None,
    modes: Sequence[str] = ("updates",),
    oracles: Overrides | None = None,
    secrets: Secrets | None = None,
    record: str | Path | None = None,
    replay: str | Path | None = None,
    cassette: Any = None,
    mandate: Mandate | None = None,
    replace_trace: bool = False,
) -> Performance:
    """Perform a ritual file from the start.

    Args:
        ritual: Path to the ritual file (YAML), or a RitualFile already loaded
            (``sanctum.ritualfile.load``).
        inputs: Values for the ritual's declared inputs (checked, defaults filled in);
            ``InputText`` values are read for the declared type.
        codex: A Codex, a Codex URL (see :func:`open_codex`) or None: the ritual file's
            ``codex:`` if it names one, else the default ``.sanctum/codex.db``. A Codex
            passed in is not closed afterwards.
        invocation_id: The Invocation's id; a fresh uuid4 hex when omitted.
        trace_path: Where to write a trace (a TraceRecorder is attached). A file that
            holds the trace of another invocation is refused unless ``replace_trace``.
        modes: Stream modes whose Omens the iteration yields (``updates``, ``values``,
            ``omens``, ``tokens``, ``agent``); empty yields none.
        oracles: Oracles replacing the file's, by name: an ``OracleOverride`` (another
            provider or model) or an Oracle object (a ScriptedOracle in a test).
        secrets: More to mask (a :class:`~sanctum.wards.secrets.Secrets`), on top of
            the ritual file's secrets and the codex URL's password: Seals, Omens,
            traces, audit lines, the result and error messages never show them.
        record: Record every Oracle call to this cassette (JSON Lines, masked; see
            ``sanctum.oracle.cassette``), replacing the file but keeping its rules.
        replay: Answer every Oracle call from this cassette; no oracle is built or
            contacted. A request that differs fails the run with a CassetteMismatch.
        cassette: A cassette recorder or player already open (instead of ``record``
            or ``replay``).
        mandate: Who the run acts for (stored in Seal metadata).
        replace_trace: Write ``trace_path`` even over the trace of another invocation
            (``sanctum run --force``).

    Returns:
        A :class:`Performance` to iterate.

    Raises:
        TypeError: If ``secrets`` is not a Secrets.
        SealError: (from the iteration) If ``invocation_id`` is empty, longer than 512
            characters or holds a NUL character, or already exists in the codex.
        RitualFileError: (from the iteration) If the ritual file is missing, no
            regular file (a named pipe, a device) or malformed.
        RitualInputError: (from the iteration) If ``ritual`` is an empty path, or the
            inputs or ``oracles`` do not fit.
    """
    extra = _checked_secrets(secrets)
    ident = invocation_id or uuid.uuid4().hex
    given = dict(inputs or {})

    async def setup() -> Staged:
        from sanctum.codex._serial import check_ids

        check_ids(ident)  # before any work: no store keys such an id
        file = _load(ritual)
        masks = file.secrets | extra
        with masked_setup(masks, file.path):
            bound = file.bind_inputs(given)
            file = _with_oracles(file, oracles)
            store = open_store(codex, fallback=file.codex)
        masks = masks | store.secrets
        async with _closed_on_error(store):
            with masked_setup(masks, file.path):
                await _refuse_taken(store.codex, ident)
                await _refuse_existing(store, ident)
                tape = cassette or open_cassette(
                    record=record,
                    replay=replay,
                    command="run",
                    superstep=0,
                    invocation=ident,
                    overridden=bool(oracles),
                )
                rite = file.compile(codex=store.codex, secrets=masks, cassette=tape)
        call = {"input": bound, "metadata": file.metadata, "mandate": mandate}
        return Staged(rite=rite, call=call, ritual=file, store=store, secrets=masks or None)

    return Performance(
        setup,
        invocation_id=ident,
        modes=modes,
        trace_path=trace_path,
        replace_trace=replace_trace,
    )


def resume(
    invocation_id: str,
    *,
    updates: Mapping[str, Any] | None = None,
    seal_id: str | None = None,
    force: bool = False,
    codex: Codex | str | None = None,
    trace_path: str | Path | None = None,
    modes: Sequence[str] = ("updates",),
    oracles: Overrides | None = None,
    secrets: Secrets | None = None,
    record: str | Path | None = None,
    replay: str | Path | None = None,
    cassette: Any = None,
    mandate: Mandate | None = None,
    decision: str | None = None,
    reason: str | None = None,
    ritual: str | Path | None = None,
) -> Performance:
    """Continue an invocation from its latest Seal (or from ``seal_id``).

    The ritual file is found through the Seal's metadata (recorded at :func:`run`): its
    absolute path, else — the project folder moved — its path relative to the project
    root, looked for below the working directory and each of its parents; ``ritual``
    names it instead. Either way it must be the version that ran: the file, its circle
    files and its Python modules are compared with their recorded digests.

    Args:
        invocation_id: The Invocation to continue.
        updates: Values merged into the restored Aether first (answers to an
            interrupt's question); each name must be a conduit or an input of the
            ritual (see ``RitualFile.bind_updates``).
        seal_id: A historic Seal to continue from instead of the latest (time-travel);
            a unique prefix of its id will do.
        force: Continue even when the ritual file changed since the run, and write
            ``trace_path`` even over the trace of another invocation.
        codex: A Codex, a Codex URL or None for the default ``.sanctum/codex.db``.
        trace_path: Where to write a trace of the resumed part (a trace of this
            invocation there is continued; another invocation's is refused).
        modes: Stream modes whose Omens the iteration yields.
        oracles: Oracles replacing the file's, as for :func:`run`.
        secrets: More to mask, as for :func:`run`.
        record: Append this resume's Oracle calls to a cassette (a new session).
        replay: Answer from the cassette's session recorded by a resume from the
            same Seal superstep.
        cassette: A cassette recorder or player already open.
        mandate: Who the resume acts for (the approver, say); only the principal is
            stored (Seal metadata).
        decision: ``"approve"`` or ``"reject"``: decide every call the paused Seal
            holds awaiting approval (signed by ``mandate``'s principal).
        reason: Why, with ``decision`` (the model sees it on a rejection).
        ritual: The ritual file to resume with (``sanctum resume --ritual``), instead
            of the one the Seal records; still checked against the recorded digests.

    Returns:
        A :class:`Performance` to iterate.

    Raises:
        TypeError: If ``secrets`` is not a Secrets.
        SealError: (from the iteration) If the codex does not exist, the invocation or
            the Seal is unknown, or the ritual file is missing, or it, a circle file or
            a Python module it runs changed (without ``force``).
        RitualInputError: (from the iteration) If an update names no conduit of the
            ritual or its value does not fit; nothing is resumed.
    """
    extra = _checked_secrets(secrets)

    async def setup() -> Staged:
        store = open_store(codex, must_exist=True)
        masks = store.secrets | extra if store.secrets else extra
        async with _closed_on_error(store):
            with masked_setup(masks, None):
                seal = await _seal_to_resume(store, invocation_id, seal_id)
                await _refuse_taken(store.codex, invocation_id)
                file = _ritual_of_seal(seal, invocation_id, force=force, ritual=ritual)
            masks = file.secrets | masks
            with masked_setup(masks, file.path):
                asked = dict(updates or {})
                if decision is not None:
                    waiting = (seal.interrupt or {}).get("sigil")
                    asked.update(
                        approval_updates(
                            seal,
                            decision,
                            reason=reason,
                            mandate=mandate,
                            roles=spell_roles(file, waiting),
                        )
                    )
                _refuse_lost_sigils(seal, file, invocation_id)
                bound = file.bind_updates(asked)
                file = _with_oracles(file, oracles)
                tape = cassette or open_cassette(
                    record=record,
                    replay=replay,
                    command="resume",
                    superstep=seal.superstep,
                    invocation=invocation_id,
                    overridden=bool(oracles),
                )
                rite = file.compile(codex=store.codex, secrets=masks, cassette=tape)
        call: dict[str, Any] = {"metadata": file.metadata, "mandate": mandate}
        if bound:
            call["updates"] = bound
        if seal_id is not None:
            call["seal_id"] = seal.seal_id  # the whole id, when a prefix was given
        return Staged(rite=rite, call=call, ritual=file, store=store, secrets=masks or None)

    return Performance(
        setup,
        invocation_id=invocation_id,
        modes=modes,
        trace_path=trace_path,
        resumes=True,
        replace_trace=force,
    )


# --------------------------------------------------------------------------- the steps


def _load(ritual: str | Path | RitualFile) -> RitualFile:
    """The RitualFile to perform (loaded here unless given loaded)."""
    from sanctum.ritualfile import RitualFile, load

    if isinstance(ritual, RitualFile):
        return ritual
    with masked_setup(None, Path(ritual).resolve() if str(ritual).strip() else None):
        return load(ritual)


def _with_oracles(file: RitualFile, oracles: Overrides | None) -> RitualFile:
    return file.with_oracles(oracles) if oracles else file


class _closed_on_error:
    """Close an opened store when the setup fails after opening it."""

    def __init__(self, store: OpenedStore) -> None:
        self._store = store

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None:
            await self._store.close()


def _checked_secrets(secrets: Any) -> Secrets | None:
    """``secrets`` when it is a Secrets (or None); a TypeError otherwise."""
    from sanctum.wards.secrets import Secrets

    if secrets is None or isinstance(secrets, Secrets):
        return secrets
    raise TypeError(
        f"secrets must be a sanctum Secrets (a masking policy), got {type(secrets).__name__}"
    )


async def _refuse_taken(store: Codex, invocation_id: str) -> None:
    """Refuse, before anything runs, an invocation another live call is running (or,
    for a run, one the codex already holds).

    Raises:
        SealError: If a live call holds ``invocation_id``.
    """
    from sanctum.codex.claims import describe_holder

    holder = await store.holder(invocation_id)
    if holder is not None:
        raise SealError(
            f"invocation {invocation_id!r} is being run by another call: "
            f"{describe_holder(holder)}; nothing was run. Wait for it to finish or pause "
            f"(`sanctum invocations` shows it as running), then resume again",
            invocation_id=invocation_id,
        )


async def _refuse_existing(store: OpenedStore, invocation_id: str) -> None:
    """Refuse to start an invocation the codex already holds.

    Raises:
        SealError: Naming the resume command that continues it (through the queue for
            one queue workers run).
    """
    if await store.codex.latest_seal_id(invocation_id) is not None:
        head = await store.codex.get(invocation_id)
        queued = head is not None and origin_of(head.metadata).queued
        raise SealError(
            f"invocation {invocation_id!r} already exists in the codex; continue it with "
            f"`{resume_command(invocation_id, store.url, queued=queued)}` or choose another "
            "--invocation",
            invocation_id=invocation_id,
        )


async def _seal_to_resume(store: OpenedStore, invocation_id: str, seal_id: str | None) -> Seal:
    """The Seal a resume continues from: ``seal_id`` (or a prefix of it), else the latest.

    Raises:
        SealError: For an unknown invocation or Seal, or a finished invocation resumed
            from its latest Seal.
    """
    codex = store.codex
    if seal_id is None:
        seal = await codex.get(invocation_id)
        if seal is None:
            raise SealError(
                f"unknown invocation {invocation_id!r} in the codex "
                f"{_describe_codex(store.url)}; list them with `sanctum invocations`",
                invocation_id=invocation_id,
            )
        if all(name == "__end__" for name in seal.frontier):
            _refuse_done(seal, invocation_id, store.url)
        return seal
    found = await codex.get_seal(invocation_id, seal_id)
    if found is None and seal_id:
        whole = await _seal_by_prefix(codex, invocation_id, seal_id)
        found = await codex.get_seal(invocation_id, whole) if whole else None
    if found is None:
        raise SealError(
            f"invocation {invocation_id!r} has no seal {seal_id!r}; list its seals "
            f"with `sanctum seals --invocation {invocation_id}`",
            invocation_id=invocation_id,
            seal_id=seal_id,
        )
    return found


async def _seal_by_prefix(store: Codex, invocation_id: str, prefix: str) -> str | None:
    """The one Seal id of ``invocation_id`` that starts with ``prefix``, as git does.

    Returns:
        The whole id, or None when no Seal id starts with ``prefix``.

    Raises:
        SealError: When several do (the message lists them).
    """
    found = [
        seal.seal_id
        async for seal in store.history(invocation_id, values=False)
        if seal.seal_id.startswith(prefix)
    ]
    if len(found) > 1:
        shown = ", ".join(found[:5]) + (", …" if len(found) > 5 else "")
        raise SealError(
            f"--seal {prefix!r} is the start of {len(found)} seals of invocation "
            f"{invocation_id!r} ({shown}); give more of the id",
            invocation_id=invocation_id,
            seal_id=prefix,
        )
    return found[0] if found else None


def _refuse_done(seal: Seal, invocation_id: str, codex_url: str | None) -> None:
    """Refuse to resume a finished invocation; show how to branch from one of its Seals.

    Raises:
        SealError: Always.
    """
    import shlex

    codex = f" --codex {shlex.quote(codex_url)}" if codex_url else ""
    ident = shlex.quote(invocation_id)
    raise SealError(
        f"invocation {invocation_id!r} is done (its last seal {seal.seal_id} reached END at "
        f"superstep {seal.superstep}); nothing was resumed, and its history stays as it is. "
        f"To run part of it again, branch from one of its seals: list them with `sanctum "
        f"seals --invocation {ident}{codex}`, then `sanctum resume --invocation {ident} "
        f"--seal SEAL_ID{codex}` (with --update KEY=VALUE to change values)",
        invocation_id=invocation_id,
        seal_id=seal.seal_id,
    )


def _ritual_of_seal(
    seal: Seal, invocation_id: str, *, force: bool, ritual: str | Path | None = None
) -> RitualFile:
    """The ritual file a Seal records, loaded and checked against its recorded digests.

    The file is ``ritual`` when given; else the recorded absolute path; else, when that
    is gone (the project folder moved), the recorded project-relative path below the
    working directory or one of its parents. Its digest and those of its circle files
    and Python modules (:meth:`RitualFile.parts`) must be the ones recorded, unless
    ``force``.

    Raises:
        SealError: If the Seal records no ritual file (and ``ritual`` is not given), no
            file is found, or it (or a circle file or module) changed since the run
            (unless ``force``).
        RitualFileError: If the file (unchanged, or ``force``) has problems.
    """
    from sanctum.ritualfile import load

    record = seal.metadata.get("ritual")
    if not isinstance(record, Mapping):
        record = {}
    path = _recorded_path(record, invocation_id, ritual)
    recorded = record.get("sha256")
    try:
        file = load(path)
    except RitualFileError:
        if _changed(path, recorded, force=force):
            raise _changed_error(path, invocation_id) from None
        raise
    if recorded and not force and file.digest != recorded:
        raise _changed_error(path, invocation_id)
    parts = record.get("parts")
    if isinstance(parts, Mapping) and not force:
        now = file.parts()
        changed = sorted(k for k in {*parts, *now} if parts.get(k) != now.get(k))
        if changed:
            raise _changed_error(path, invocation_id, parts=changed)
    return file


def _recorded_path(
    record: Mapping[str, Any], invocation_id: str, ritual: str | Path | None
) -> Path:
    """Where the ritual file of a Seal's record is now (see :func:`_ritual_of_seal`).

    Raises:
        SealError: If the record names no file and ``ritual`` is not given, or no file
            is found where it was nor below the working directory's folders.
    """
    if ritual is not None:
        return Path(ritual)
    if not isinstance(record.get("path"), str):
        raise SealError(
            f"invocation {invocation_id!r} was not started from a ritual file (its seals "
            "record no ritual path); name the file with --ritual PATH, or resume it from "
            "Python with rite.ainvoke(invocation_id=...)",
            invocation_id=invocation_id,
        )
    path = Path(record["path"])
    if path.is_file():
        return path
    relative = record.get("project_path")
    if isinstance(relative, str) and relative:
        here = Path.cwd()
        for base in (here, *here.parents):
            if (base / relative).is_file():
                return base / relative
    looked = f" (nor is {relative} below the working directory)" if relative else ""
    raise SealError(
        f"invocation {invocation_id!r} ran the ritual {path}, which no longer exists"
        f"{looked}; restore the file, or name where it is now with --ritual PATH",
        invocation_id=invocation_id,
        location=str(path),
    )


def _refuse_lost_sigils(seal: Seal, file: RitualFile, invocation_id: str) -> None:
    """Refuse a Seal whose next sigils the ritual file no longer has (renamed, removed).

    Raises:
        SealError: Naming the sigils, the file and the way on; nothing was resumed.
    """
    from sanctum.ritual.constants import END

    lost = [name for name in seal.frontier if name != END and name not in file.spec.sigils]
    if not lost:
        return
    names = ", ".join(repr(name) for name in lost)
    noun = "sigil" if len(lost) == 1 else "sigils"
    raise SealError(
        f"the ritual file {file.path} no longer has the {noun} {names} that invocation "
        f"{invocation_id!r} continues with (renamed or removed since seal "
        f"{seal.seal_id[:12]}); restore the {noun}, or resume from an earlier seal with "
        f"--seal (see `sanctum seals --invocation {invocation_id}`); nothing was resumed",
        invocation_id=invocation_id,
        seal_id=seal.seal_id,
    )


def _changed(path: Path, recorded: Any, *, force: bool) -> bool:
    """Whether a file that failed to load differs from the version a Seal recorded."""
    from sanctum.api._results import ritual_digest

    if not recorded or force:
        return False
    try:
        return bool(ritual_digest(path) != recorded)
    except OSError:
        return False


def _changed_error(path: Path, invocation_id: str, *, parts: Sequence[str] = ()) -> SealError:
    if parts:
        return SealError(
            f"{', '.join(parts)}, run by the ritual {path}, changed since invocation "
            f"{invocation_id!r} ran it; resuming may misbehave. Restore the old version, "
            "or pass --force to resume with the new one",
            invocation_id=invocation_id,
            location=str(path),
        )
    return SealError(
        f"the ritual {path} changed since invocation {invocation_id!r} ran it; resuming "
        "may misbehave. Restore the file, or pass --force to resume with the new version",
        invocation_id=invocation_id,
        location=str(path),
    )
