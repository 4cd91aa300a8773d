"""A recorded trace drawn as a rich Tree for ``sanctum trace show``.

The trace document's format is :mod:`sanctum.tracing.document`'s: supersteps with
their Sigils, spell calls, retries, repairs, rejections, an agent's decisions (the
agent-mode Omens kept in ``other_omens``: fallbacks, compactions, budgets, guards,
approvals), Seals, the interrupt or failure, the final Aether and any Circles (drawn
as nested trees). Every piece of text
from the document is drawn with :func:`sanctum.cli._view.printable` inside a rich
``Text``, so no control character and no rich markup in it takes effect.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from rich.text import Text
from rich.tree import Tree

from sanctum.cli._common import printable
from sanctum.cli._omen_lines import AGENT_OMENS, agent_record_line, rejection_line
from sanctum.cli._view import aether_tree, duration, short

__all__ = ["duration", "trace_tree"]

_MARKS = {
    "completed": ("✓", "green"),
    "rejected": ("✗", "red"),
    "failed": ("✗", "bold red"),
    "interrupted": ("⏸", "yellow"),
    "aborted": ("–", "dim"),
    "running": ("…", "magenta"),
}
_STATUS_STYLE = {
    "completed": "bold green",
    "interrupted": "bold yellow",
    "failed": "bold red",
    "incomplete": "bold magenta",
}


FOLD_AFTER = 100
"""Items drawn before the middle of a longer list is folded (half at each end).

It applies to every per-superstep list: the timeline's supersteps, the Seals and the
Circles.
"""

_T = TypeVar("_T")
_Key = Hashable


def trace_tree(trace: Mapping[str, Any], *, label: str | None = None, fold: bool = True) -> Tree:
    """Draw one trace document (or a Circle's nested trace) as a Tree.

    Args:
        trace: The readable trace document (``load_trace``).
        label: The head's first word (``trace``, or a Circle's description).
        fold: Draw only the first and last ``FOLD_AFTER // 2`` supersteps, Seals and
            Circles of a longer list, with one line saying how many are left out.

    Returns:
        The tree, its text escaped (control characters written as ``\\u001b``).
    """
    status = printable(trace.get("status") or "incomplete")
    head = Text.assemble(
        (printable(label or "trace"), "bold"),
        " ",
        (printable(trace.get("invocation_id") or "?"), "bold"),
        "  ",
        (status, _STATUS_STYLE.get(status, "bold")),
        f"  {duration(trace.get('duration'))}",
    )
    if trace.get("resumed_from"):
        head.append(f"  (resumed from seal {printable(trace['resumed_from'])})", style="dim")
    tree = Tree(head)
    details = _Details(trace)
    _folded(
        tree,
        _records(trace.get("supersteps")),
        lambda step: _superstep(tree, step, details),
        noun="supersteps",
        fold=fold,
    )
    _seals(tree, _records(trace.get("seals")), fold)
    _ending(tree, trace)
    _folded(
        tree,
        _records(trace.get("circles")),
        lambda circle: _circle(tree, circle, fold),
        noun="circles",
        fold=fold,
    )
    final = trace.get("final_aether")
    if isinstance(final, Mapping):
        tree.add(aether_tree(final, label="final Aether"))
    return tree


def _folded(
    parent: Tree, items: Sequence[_T], draw: Callable[[_T], object], *, noun: str, fold: bool
) -> None:
    """Draw each item; past ``FOLD_AFTER`` (when folding) only both ends and a count."""
    if fold and len(items) > FOLD_AFTER:
        half = FOLD_AFTER // 2
        for item in items[:half]:
            draw(item)
        hidden = len(items) - 2 * half
        parent.add(Text(f"… {hidden:,} {noun} not shown (--all shows every one)", "dim"))
        items = items[-half:]
    for item in items:
        draw(item)


class _Details:
    """The spell calls, retries, repairs, rejections and agent decisions of a trace.

    Indexed once by superstep and Sigil, so drawing a long timeline does not scan every
    list per Sigil.
    """

    def __init__(self, trace: Mapping[str, Any]) -> None:
        self.spell_calls = self._index(trace.get("spell_calls"))
        self.retries = self._index(trace.get("retries"))
        self.repairs = self._index(trace.get("repairs"))
        self.rejections = self._index(trace.get("rejections"))
        others = _records(trace.get("other_omens"))
        self.agent = self._index([o for o in others if o.get("type") in _AGENT_TYPES])

    @staticmethod
    def _index(value: Any) -> dict[_Key, list[Mapping[str, Any]]]:
        index: dict[_Key, list[Mapping[str, Any]]] = {}
        for record in _records(value):
            index.setdefault(_key(record.get("superstep"), record.get("sigil")), []).append(record)
        return index


def _key(superstep: Any, sigil: Any) -> _Key:
    """The (superstep, sigil) pair as a dict key (its ``repr`` when a value is a list)."""
    pair = (superstep, sigil)
    try:
        hash(pair)
    except TypeError:
        return repr(pair)
    return pair


def _superstep(tree: Tree, step: Mapping[str, Any], details: _Details) -> None:
    number = step.get("superstep")
    branch = tree.add(
        Text.assemble(
            (f"superstep {printable(number)}", "bold"),
            "  ",
            (", ".join(printable(s) for s in _list(step.get("frontier"))), "cyan"),
            f"  {duration(step.get('duration'))}",
        )
    )
    for entry in _records(step.get("sigils")):
        status = printable(entry.get("status"))
        mark, style = _MARKS.get(status, ("?", "white"))
        line = Text.assemble(
            (f"{mark} ", style),
            (printable(entry.get("sigil")), "cyan"),
            f"  {status}  {duration(entry.get('duration'))}",
        )
        attempts = entry.get("attempts")
        if isinstance(attempts, int) and attempts > 1:
            line.append(f"  {attempts} attempts", style="bold yellow")
        keys = _list(entry.get("delta_keys"))
        if keys:
            line.append(f"  → {', '.join(printable(k) for k in keys)}", style="dim")
        node = branch.add(line)
        key = _key(number, entry.get("sigil"))
        for call in details.spell_calls.get(key, ()):
            node.add(
                Text(
                    f"spell {printable(call.get('spell'))}({short(call.get('arguments'), 80)}) "
                    f"{printable(call.get('status'))} → {short(call.get('result'), 80)}"
                )
            )
        for retry in details.retries.get(key, ()):
            node.add(
                Text(
                    f"↻ retry {printable(retry.get('attempt'))} after "
                    f"{printable(retry.get('cause'), lines=True)}",
                    style="bold yellow",
                )
            )
        for repair in details.repairs.get(key, ()):
            node.add(
                Text(
                    f"✚ repaired spell call {printable(repair.get('spell'))}: "
                    f"{printable(repair.get('detail'), lines=True)}",
                    style="bold yellow",
                )
            )
        for reject in details.rejections.get(key, ()):
            node.add(Text(_rejection(reject, entry.get("sigil")), style="bold red"))
        for event in details.agent.get(key, ()):
            said = agent_record_line(event, printable(entry.get("sigil")))
            if said is not None:
                node.add(Text(said.strip(), style="bold yellow"))


_AGENT_TYPES = frozenset(kind.__name__ for kind in AGENT_OMENS)


def _rejection(reject: Mapping[str, Any], sigil: Any) -> str:
    """A rejected spell call (or the dropped calls of a final answer), or a vetoed delta."""
    spell = reject.get("spell")
    if isinstance(spell, str) and reject.get("kind") != "delta":
        return rejection_line(spell, reject.get("reason"), printable(sigil)).strip()
    what = printable(spell or reject.get("ward"))
    return f"✗ rejected {what}: {printable(reject.get('reason'), lines=True)}"


def _seals(tree: Tree, seals: Sequence[Mapping[str, Any]], fold: bool) -> None:
    if not seals:
        return
    branch = tree.add(Text(f"seals [{len(seals)}]", style="bold"))

    def draw(seal: Mapping[str, Any]) -> None:
        flag = "  (interrupt)" if seal.get("interrupted") else ""
        branch.add(
            Text(
                f"{printable(seal.get('seal_id'))}  superstep "
                f"{printable(seal.get('superstep'))}{flag}"
            )
        )

    _folded(branch, seals, draw, noun="seals", fold=fold)


def _ending(tree: Tree, trace: Mapping[str, Any]) -> None:
    interrupt = trace.get("interrupt")
    if isinstance(interrupt, Mapping):
        tree.add(
            Text.assemble(
                ("⏸ interrupt", "bold yellow"),
                f" at {printable(interrupt.get('sigil'))}: "
                f"{printable(interrupt.get('reason'), lines=True)}",
            )
        )
    failure = trace.get("failure")
    if isinstance(failure, Mapping):
        tree.add(
            Text.assemble(
                ("✗ failure", "bold red"),
                f" {printable(failure.get('type'))} in {printable(failure.get('sigil'))}: "
                f"{printable(failure.get('message'), lines=True)}",
            )
        )


def _circle(tree: Tree, circle: Mapping[str, Any], fold: bool) -> None:
    nested = circle.get("trace")
    inner: Mapping[str, Any] = nested if isinstance(nested, Mapping) else {}
    tree.add(
        trace_tree(
            inner,
            label=f"circle {circle.get('circle')} (sigil {circle.get('sigil')}, "
            f"superstep {circle.get('superstep')})",
            fold=fold,
        )
    )


def _list(value: Any) -> Sequence[Any]:
    """A list from the document, or empty when the key is missing or malformed."""
    return value if isinstance(value, list) else []


def _records(value: Any) -> Sequence[Mapping[str, Any]]:
    """The mappings of a list from the document (anything else is skipped)."""
    return [item for item in _list(value) if isinstance(item, Mapping)]
