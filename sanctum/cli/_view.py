"""The people view of a performance: superstep lines, tokens, the final Aether.

On a terminal a live line shows the running superstep — a spinner, its running Sigils
and the elapsed time — and the last tokens the model streamed; each finished superstep
becomes a permanent line. Off a terminal (a pipe, a file, ``NO_COLOR`` or not) the view
prints the same permanent lines plainly and streams tokens as they arrive. Durations
come from the Omens' own timestamps, so a replayed stream renders identically.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text
from rich.tree import Tree

from sanctum.cli._common import EPHEMERAL_NOTE, make_console, printable
from sanctum.cli._omen_lines import agent_line, rejection_line
from sanctum.omens.events import (
    CircleEchoed,
    DeltaRejected,
    Omen,
    RiteBegan,
    SealWritten,
    SigilBegan,
    SigilCompleted,
    SigilRetried,
    SpellCallRejected,
    SpellCallRepaired,
    SuperstepBegan,
    SuperstepCompleted,
    TokenEmitted,
)
from sanctum.omens.modes import STREAM_MODES

if TYPE_CHECKING:
    from sanctum.api import RunResult

__all__ = [
    "RunView",
    "aether_tree",
    "agent_line",
    "duration",
    "printable",
    "short",
]

_TOKEN_TAIL = 160

"""C0 controls (ESC among them), DEL and C1 controls (CSI, U+009B, among them)."""
"""The same, less newline and tab."""


def short(value: Any, limit: int = 120) -> str:
    """A value on one line as compact JSON (repr when JSON refuses), cut at ``limit``.

    Control characters are escaped (see :func:`printable`): JSON escapes C0 controls
    itself, and DEL and C1 controls are escaped here.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _names(names: Sequence[Any]) -> str:
    """Sigil names joined with commas, each made printable."""
    return ", ".join(printable(name) for name in names)


def aether_tree(aether: Mapping[str, Any], label: str = "Aether") -> Tree:
    """The Aether (state dict) as a rich Tree: one branch per Conduit, nested values below."""
    tree = Tree(Text(printable(label), style="bold"))
    for key, value in aether.items():
        _grow(tree, printable(key), value)
    if not aether:
        tree.add(Text("(empty)", style="dim"))
    return tree


def _grow(parent: Tree, key: str, value: Any) -> None:
    if isinstance(value, Mapping) and value:
        branch = parent.add(Text(key, style="cyan"))
        for child_key, child in value.items():
            _grow(branch, printable(child_key), child)
    elif isinstance(value, list | tuple) and value and not _flat(value):
        branch = parent.add(Text(f"{key} [{len(value)}]", style="cyan"))
        for index, child in enumerate(value):
            _grow(branch, f"[{index}]", child)
    else:
        line = Text.assemble((key, "cyan"), " = ", short(value, 400))
        parent.add(line)


def _flat(values: Sequence[Any]) -> bool:
    """A short list of short scalars stays on one line."""
    return (
        len(values) <= 8
        and all(isinstance(v, str | int | float | bool) or v is None for v in values)
        and len(short(list(values), 1000)) <= 60
    )


def duration(seconds: Any) -> str:
    """Seconds for people: ``"850µs"``, ``"12.3ms"``, ``"4.20s"``; ``"—"`` when unknown."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        return "—"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f}µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f}ms"
    return f"{seconds:.2f}s"


class _LiveLine:
    """The live renderable: spinner, superstep, running Sigils, elapsed seconds, tokens."""

    def __init__(self, view: RunView) -> None:
        self._view = view
        self._spinner = Spinner("dots", style="magenta")

    def __rich__(self) -> RenderableType:
        view = self._view
        running = _names(view.running) or "…"
        elapsed = time.monotonic() - view.wall_start
        self._spinner.update(
            text=Text.assemble(
                (f"superstep {view.superstep}", "bold"),
                "  ",
                (running, "magenta"),
                f"  {elapsed:.1f}s",
            )
        )
        tail = view.token_tail()
        if not tail:
            return self._spinner
        return Group(self._spinner, Text(tail, style="dim"))


class RunView:
    """Draws one performance for people.

    Args:
        modes: The stream modes the user asked for; ``updates`` adds each Sigil's delta,
            ``values`` the Aether after each superstep, and any other mode of
            :data:`~sanctum.omens.STREAM_MODES` (``omens``, ``agent``) one line per Omen
            of that mode with its fields (``STREAM_MODES["omens"]``: no
            ``SuperstepCompleted``, no tokens). Tokens, retries, spell-call repairs and
            the ``agent`` events (oracle fallbacks, compactions, turn budgets, loop
            guards, approvals) are always shown, one highlighted line each.
        console: Where to draw (default: stdout, colour and live only on a terminal;
            ``NO_COLOR`` set means no animation either, only the permanent lines).
        quiet: Leave out the final Aether tree (``--quiet``): the status line, the
            invocation id and, for a pause, the reason and resume command remain.
    """

    def __init__(
        self,
        *,
        modes: Sequence[str] = (),
        console: Console | None = None,
        quiet: bool = False,
    ) -> None:
        self.console = console if console is not None else make_console()
        self.modes = frozenset(modes)
        self._listed: tuple[type[Omen], ...] = tuple(
            kind
            for mode in sorted(self.modes - _DRAWN_MODES)
            for kind in STREAM_MODES.get(mode, ())
        )
        self.quiet = quiet
        self.superstep = 0
        self.frontier: tuple[str, ...] = ()
        self.running: list[str] = []
        self.started: float | None = None
        self.first: float | None = None
        self.wall_start = time.monotonic()
        self.supersteps = 0
        self._tokens: dict[str, str] = {}
        self._streaming: str | None = None
        self._live: Live | None = None
        animate = not (self.console.no_color or os.environ.get("NO_COLOR"))
        if animate and self.console.is_terminal and not self.console.is_dumb_terminal:
            self._live = Live(
                _LiveLine(self),
                console=self.console,
                refresh_per_second=10,
                transient=True,
            )

    # ------------------------------------------------------------------ omens

    def omen(self, omen: Omen) -> None:
        """Take one Omen into the view."""
        if self.first is None:
            self.first = omen.timestamp
        if self._listed and isinstance(omen, self._listed):
            self._print(Text(f"· {_omen_line(omen)}", style="dim"))
        if isinstance(omen, RiteBegan):
            if omen.resumed_from:
                self._print(Text(f"resuming from seal {printable(omen.resumed_from)}", style="dim"))
        elif isinstance(omen, SuperstepBegan):
            self._begin(omen)
        elif isinstance(omen, SigilBegan):
            if omen.sigil not in self.running:
                self.running.append(omen.sigil)
        elif isinstance(omen, SigilCompleted):
            self._end_tokens(omen.sigil)
            if omen.sigil in self.running:
                self.running.remove(omen.sigil)
            if "updates" in self.modes:
                self._print(
                    Text.assemble(
                        "  ", (printable(omen.sigil), "cyan"), " → ", short(dict(omen.delta), 200)
                    )
                )
        elif isinstance(omen, SuperstepCompleted):
            self._complete(omen)
        elif isinstance(omen, TokenEmitted):
            self._token(omen.sigil or "?", omen.payload)
        elif isinstance(omen, CircleEchoed):
            inner = omen.omen
            if isinstance(inner, TokenEmitted):
                self._token(f"{omen.circle}/{inner.sigil or '?'}", inner.payload)
            elif isinstance(inner, SpellCallRejected):
                who = f"{printable(omen.circle)}/{printable(inner.sigil or '?')}"
                self._print(Text(rejection_line(inner.spell, inner.reason, who), style="bold red"))
            elif isinstance(inner, SigilRetried | SpellCallRepaired):
                self.omen(inner)
            else:
                self._echoed_agent(omen)
        elif isinstance(omen, SigilRetried):
            self._print(
                Text(
                    f"  ↻ {printable(omen.sigil)}: retry {omen.attempt} in {omen.delay:.2f}s "
                    f"after {printable(omen.cause, lines=True)}",
                    style="bold yellow",
                )
            )
        elif isinstance(omen, SpellCallRepaired):
            self._print(
                Text(
                    f"  ✚ repaired spell call {printable(omen.spell)}: "
                    f"{printable(omen.detail, lines=True)}",
                    style="bold yellow",
                )
            )
        elif isinstance(omen, SpellCallRejected):
            who = printable(omen.sigil or "?")
            self._print(Text(rejection_line(omen.spell, omen.reason, who), style="bold red"))
        elif isinstance(omen, DeltaRejected):
            reason = f": {printable(omen.reason, lines=True)}" if omen.reason else ""
            self._print(
                Text(
                    f"  ✗ {printable(omen.ward)} vetoed the delta of {printable(omen.sigil)}"
                    f"{reason}",
                    style="bold red",
                )
            )
        elif isinstance(omen, SealWritten) and omen.interrupted:
            self._open_superstep_line("⏸", "paused", "bold yellow")
        elif (line := agent_line(omen)) is not None:
            self._print(Text(line, style="bold yellow"))

    def _echoed_agent(self, echo: CircleEchoed) -> None:
        """Highlight an agent event echoed out of (possibly nested) Circles."""
        path: list[str] = []
        inner: Omen = echo
        while isinstance(inner, CircleEchoed):
            path.append(inner.circle)
            inner = inner.omen
        line = agent_line(inner, circle="/".join(path))
        if line is not None:
            self._print(Text(line, style="bold yellow"))

    def _begin(self, omen: SuperstepBegan) -> None:
        if self.started is not None:
            # the previous superstep never completed: a failure diverted by on_error
            self._open_superstep_line("↪", "failed; on_error fallback next", "bold red")
        self.superstep = omen.superstep
        self.frontier = tuple(omen.frontier)
        self.running = []
        self.started = omen.timestamp
        self.wall_start = time.monotonic()
        if self._live is not None and not self._live.is_started:
            self._live.start()

    def _complete(self, omen: SuperstepCompleted) -> None:
        self._flush_tokens()
        self.supersteps += 1
        elapsed = omen.timestamp - (self.started if self.started is not None else omen.timestamp)
        self._print(
            Text.assemble(
                ("✓ ", "green"),
                (f"superstep {omen.superstep}", "bold"),
                "  ",
                (_names(self.frontier), "cyan"),
                f"  {duration(elapsed)}",
            )
        )
        if "values" in self.modes:
            self._print(aether_tree(omen.aether, label=f"Aether after superstep {omen.superstep}"))
        self.started = None
        self.frontier = ()
        self.running = []

    def _open_superstep_line(self, mark: str, word: str, style: str) -> None:
        if self.started is None:
            return
        self._flush_tokens()
        self._print(
            Text.assemble(
                (f"{mark} ", style),
                (f"superstep {self.superstep}", "bold"),
                "  ",
                (_names(self.frontier), "cyan"),
                f"  {word}",
            )
        )
        self.started = None

    # ------------------------------------------------------------------ tokens

    def _token(self, sigil: str, payload: Any) -> None:
        text = payload if isinstance(payload, str) else short(payload, 400)
        self._tokens[sigil] = self._tokens.get(sigil, "") + text
        if self._live is not None:
            return
        if self._streaming != sigil:
            if self._streaming is not None:
                self.console.file.write("\n")
            self.console.file.write(f"  {printable(sigil)} │ ")
            self._streaming = sigil
        self.console.file.write(printable(text, lines=True))
        self.console.file.flush()

    def token_tail(self) -> str:
        """The last characters streamed by a running Sigil, for the live line."""
        for sigil in reversed(list(self._tokens)):
            text = self._tokens[sigil].replace("\n", " ")
            if text:
                return f"{printable(sigil)} │ {printable(text[-_TOKEN_TAIL:])}"
        return ""

    def _end_tokens(self, sigil: str) -> None:
        text = self._tokens.pop(sigil, None)
        if text is None:
            return
        if self._live is not None:
            self._print(
                Text.assemble("  ", (printable(sigil), "cyan"), " │ ", printable(text, lines=True))
            )
        elif self._streaming == sigil:
            self.console.file.write("\n")
            self.console.file.flush()
            self._streaming = None

    def _flush_tokens(self) -> None:
        for sigil in list(self._tokens):
            self._end_tokens(sigil)
        if self._streaming is not None:
            self.console.file.write("\n")
            self._streaming = None

    # ------------------------------------------------------------------ end

    def _print(self, renderable: RenderableType) -> None:
        if self._streaming is not None and self._live is None:
            self.console.file.write("\n")
            self._streaming = None
        self.console.print(renderable)

    def stop(self) -> None:
        """Take the live line down (before an error or Ctrl-C message)."""
        self._flush_tokens()
        if self._live is not None and self._live.is_started:
            self._live.stop()

    def finish(self, result: RunResult) -> None:
        """Draw how the performance ended: the status, the Aether, the invocation id."""
        if result.status == "paused":
            self._open_superstep_line("⏸", "paused", "bold yellow")
        elif result.status == "failed":
            self._open_superstep_line("✗", "failed", "bold red")
        self.stop()
        console = self.console
        if not self.quiet:
            console.print(aether_tree(result.aether))
        ident = Text.assemble("invocation ", (printable(result.invocation_id), "bold"))
        totals = usage_line(result.usage)
        if totals:
            console.print(Text(totals, style="dim"))
        if result.status == "done":
            console.print(Text.assemble(("✓ done", "bold green"), "  ", ident), soft_wrap=True)
        elif result.status == "failed":
            console.print(Text.assemble(("✗ failed", "bold red"), "  ", ident), soft_wrap=True)
        else:
            where = f" at {printable(result.sigil)}" if result.sigil else ""
            paused = Text.assemble((f"⏸ paused{where}", "bold yellow"), "  ", ident)
            console.print(paused, soft_wrap=True)
            reasons = dict(result.reasons or {})
            if len(reasons) > 1:  # several sigils paused together: one resume answers all
                for sigil, said in reasons.items():
                    text = printable(said, lines=True) if said else "(none given)"
                    console.print(Text.assemble((f"reason ({printable(sigil)}): ", "bold"), text))
            else:
                reason = printable(result.reason, lines=True) if result.reason else "(none given)"
                console.print(Text.assemble(("reason: ", "bold"), reason))
            if result.ephemeral:
                console.print(Text(EPHEMERAL_NOTE, style="yellow"), soft_wrap=True)
                return
            console.print(
                Text.assemble(
                    ("resume with: ", "bold"), (printable(result.resume_command), "bold cyan")
                ),
                soft_wrap=True,  # one line to copy, whatever the terminal's width
            )
            console.print(Text(answer_hint(result), style="dim"))


def usage_line(usage: dict[str, int] | None) -> str:
    """``usage: 3 consultations · 812 prompt tokens (640 cached) · 96 completion tokens``,
    or "" when no Oracle reported usage."""
    if not usage:
        return ""
    count = usage.get("consultations", 0)
    parts = [f"usage: {count} consultation{'s' if count != 1 else ''}"]
    if "prompt_tokens" in usage:
        cached = usage.get("cached_tokens")
        extra = f" ({cached:,} cached)" if cached else ""
        parts.append(f"{usage['prompt_tokens']:,} prompt tokens{extra}")
    if "completion_tokens" in usage:
        parts.append(f"{usage['completion_tokens']:,} completion tokens")
    return " · ".join(parts)


def answer_hint(result: RunResult) -> str:
    """How to answer a pause: approve or reject waiting calls, else give values."""
    if result.awaits_approval:
        return (
            "  (add --approve, or --reject --reason TEXT, to decide the waiting calls; "
            "--update approvals=JSON edits them)"
        )
    return "  (add --update KEY=VALUE to answer; see `sanctum resume --help`)"


_DRAWN_MODES = frozenset({"updates", "values", "tokens"})
"""Modes the view draws in its own way; any other chosen mode lists its Omens' fields."""


def _omen_line(omen: Omen) -> str:
    """One compact line naming an Omen and its telling fields."""
    from sanctum.api import omen_to_dict

    data = omen_to_dict(omen)
    data.pop("kind", None)
    name = data.pop("type")
    data.pop("timestamp", None)
    data.pop("invocation_id", None)
    for bulky in ("aether", "delta"):
        if bulky in data:
            data[bulky] = "…"
    for timing in ("duration", "delay"):
        if isinstance(data.get(timing), int | float):
            data[timing] = duration(data[timing])
    fields = " ".join(f"{k}={short(v, 60)}" for k, v in data.items())
    return f"{printable(name)} {fields}"
