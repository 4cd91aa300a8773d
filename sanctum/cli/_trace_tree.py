"""A recorded trace drawn as a rich Tree for ``sanctum trace show``.

The trace document's format is :mod:`sanctum.tracing.document`'s: supersteps with
their Sigils, spell calls, retries, repairs, rejections, Seals, the interrupt or
failure, the final Aether and any Circles (drawn as nested trees).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from rich.tree import Tree

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
"""Supersteps drawn before the middle of a longer timeline is folded (half at each end)."""


def trace_tree(trace: Mapping[str, Any], *, label: str | None = None, fold: bool = True) -> Tree:
    """Draw one trace document (or a Circle's nested trace) as a Tree.

    Args:
        trace: The readable trace document (``load_trace``).
        label: The head's first word (``trace``, or a Circle's description).
        fold: Draw only the first and last ``FOLD_AFTER // 2`` supersteps of a longer
            timeline, with one line saying how many are left out.
    """
    status = str(trace.get("status") or "incomplete")
    head = Text.assemble(
        (label or "trace", "bold"),
        " ",
        (str(trace.get("invocation_id") or "?"), "bold"),
        "  ",
        (status, _STATUS_STYLE.get(status, "bold")),
        f"  {duration(trace.get('duration'))}",
    )
    if trace.get("resumed_from"):
        head.append(f"  (resumed from seal {trace['resumed_from']})", style="dim")
    tree = Tree(head)
    steps = _records(trace.get("supersteps"))
    if fold and len(steps) > FOLD_AFTER:
        half = FOLD_AFTER // 2
        for step in steps[:half]:
            _superstep(tree, step, trace)
        hidden = len(steps) - 2 * half
        tree.add(Text(f"… {hidden:,} supersteps not shown (--all shows every one)", "dim"))
        steps = steps[-half:]
    for step in steps:
        _superstep(tree, step, trace)
    _extras(tree, trace)
    for circle in _records(trace.get("circles")):
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
    final = trace.get("final_aether")
    if isinstance(final, Mapping):
        tree.add(aether_tree(final, label="final Aether"))
    return tree


def _superstep(tree: Tree, step: Mapping[str, Any], trace: Mapping[str, Any]) -> None:
    number = step.get("superstep")
    branch = tree.add(
        Text.assemble(
            (f"superstep {number}", "bold"),
            "  ",
            (", ".join(str(s) for s in _list(step.get("frontier"))), "cyan"),
            f"  {duration(step.get('duration'))}",
        )
    )
    for entry in _records(step.get("sigils")):
        status = str(entry.get("status"))
        mark, style = _MARKS.get(status, ("?", "white"))
        line = Text.assemble(
            (f"{mark} ", style),
            (str(entry.get("sigil")), "cyan"),
            f"  {status}  {duration(entry.get('duration'))}",
        )
        attempts = entry.get("attempts")
        if isinstance(attempts, int) and attempts > 1:
            line.append(f"  {attempts} attempts", style="bold yellow")
        keys = _list(entry.get("delta_keys"))
        if keys:
            line.append(f"  → {', '.join(str(k) for k in keys)}", style="dim")
        node = branch.add(line)
        for call in _records(trace.get("spell_calls")):
            if call.get("superstep") == number and call.get("sigil") == entry.get("sigil"):
                node.add(
                    Text(
                        f"spell {call.get('spell')}({short(call.get('arguments'), 80)}) "
                        f"{call.get('status')} → {short(call.get('result'), 80)}"
                    )
                )
        for retry in _records(trace.get("retries")):
            if retry.get("superstep") == number and retry.get("sigil") == entry.get("sigil"):
                node.add(
                    Text(
                        f"↻ retry {retry.get('attempt')} after {retry.get('cause')}",
                        style="bold yellow",
                    )
                )
        for repair in _records(trace.get("repairs")):
            if repair.get("superstep") == number and repair.get("sigil") == entry.get("sigil"):
                node.add(
                    Text(
                        f"✚ repaired spell call {repair.get('spell')}: {repair.get('detail')}",
                        style="bold yellow",
                    )
                )
        for reject in _records(trace.get("rejections")):
            if reject.get("superstep") == number and reject.get("sigil") == entry.get("sigil"):
                what = reject.get("spell") or reject.get("ward")
                node.add(Text(f"✗ rejected {what}: {reject.get('reason')}", style="bold red"))


def _extras(tree: Tree, trace: Mapping[str, Any]) -> None:
    seals = _records(trace.get("seals"))
    if seals:
        branch = tree.add(Text(f"seals [{len(seals)}]", style="bold"))
        for seal in seals:
            flag = "  (interrupt)" if seal.get("interrupted") else ""
            branch.add(Text(f"{seal.get('seal_id')}  superstep {seal.get('superstep')}{flag}"))
    interrupt = trace.get("interrupt")
    if isinstance(interrupt, Mapping):
        tree.add(
            Text.assemble(
                ("⏸ interrupt", "bold yellow"),
                f" at {interrupt.get('sigil')}: {interrupt.get('reason')}",
            )
        )
    failure = trace.get("failure")
    if isinstance(failure, Mapping):
        tree.add(
            Text.assemble(
                ("✗ failure", "bold red"),
                f" {failure.get('type')} in {failure.get('sigil')}: {failure.get('message')}",
            )
        )


def _list(value: Any) -> Sequence[Any]:
    """A list from the document, or empty when the key is missing or malformed."""
    return value if isinstance(value, list) else []


def _records(value: Any) -> Sequence[Mapping[str, Any]]:
    """The mappings of a list from the document (anything else is skipped)."""
    return [item for item in _list(value) if isinstance(item, Mapping)]
