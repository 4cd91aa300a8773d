"""Drawing a ritual as a diagram: Mermaid (renders on GitHub) or Graphviz DOT.

Reads the RitualSpec only — no engine, no user code — so ``sanctum graph`` works on any
file that validates. Static edges are solid, routes are labelled with their condition,
``on_error`` fallbacks are dotted, and ``join: all`` barriers are drawn as hexagons.
"""

from __future__ import annotations

from typing import Literal

from sanctum.ritualfile.kinds import kind_of
from sanctum.ritualfile.models import PolicySpec, RitualSpec

__all__ = ["ritual_graph"]

_END = "END"


def _kind(sigil: object) -> str:
    """The word drawn under a sigil's name: its kind's label (``route`` for none)."""
    return kind_of(sigil).label


def _edges(spec: RitualSpec) -> list[tuple[str, str, str, str]]:
    """(source, target, label, style) with style solid | route | error."""
    edges: list[tuple[str, str, str, str]] = []
    entries = [spec.entry] if isinstance(spec.entry, str) else spec.entry
    for entry in entries:
        edges.append(("START", entry, "", "solid"))
    for name, sigil in spec.sigils.items():
        if sigil.next is not None:
            for target in [sigil.next] if isinstance(sigil.next, str) else sigil.next:
                edges.append((name, _END if target in ("END", "__end__") else target, "", "solid"))
        for route in sigil.routes or []:
            target = _END if route.to in ("END", "__end__") else route.to
            edges.append((name, target, route.when or "otherwise", "route"))
        policy = sigil.policy if sigil.policy is not None else spec.default_policy
        if isinstance(policy, str):
            policy = spec.policies.get(policy)
        if isinstance(policy, PolicySpec) and policy.on_error and policy.on_error != name:
            edges.append((name, policy.on_error, "on_error", "error"))
    return edges


def _mermaid_text(text: str) -> str:
    return (
        text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
    )


def _mermaid(spec: RitualSpec) -> str:
    ids = {name: f"s{i}" for i, name in enumerate(spec.sigils)}
    ids.update({"START": "start", _END: "finish"})
    lines = ["flowchart TD", '  start(["START"])', '  finish(["END"])']
    for name, sigil in spec.sigils.items():
        label = _mermaid_text(f"{name}<br/><i>{_kind(sigil)}</i>").replace("#lt;br/#gt;", "<br/>")
        label = label.replace("#lt;i#gt;", "<i>").replace("#lt;/i#gt;", "</i>")
        shape = ("{{", "}}") if sigil.join == "all" else ('["', '"]')
        open_, close = shape
        if shape[0] == "{{":
            lines.append(f'  {ids[name]}{{{{"{label}"}}}}')
        else:
            lines.append(f"  {ids[name]}{open_}{label}{close}")
    for source, target, label, style in _edges(spec):
        if target not in ids:
            continue
        arrow = {"solid": "-->", "route": "-->", "error": "-.->"}[style]
        text = f'|"{_mermaid_text(label)}"|' if label else ""
        lines.append(f"  {ids[source]} {arrow}{text} {ids[target]}")
    return "\n".join(lines) + "\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _dot(spec: RitualSpec) -> str:
    lines = [
        f'digraph "{_dot_text(spec.name)}" {{',
        "  rankdir=TB;",
        '  "START" [shape=oval];',
        '  "END" [shape=oval];',
    ]
    for name, sigil in spec.sigils.items():
        shape = "hexagon" if sigil.join == "all" else "box"
        lines.append(
            f'  "{_dot_text(name)}" [shape={shape}, label="{_dot_text(name)}\\n{_kind(sigil)}"];'
        )
    for source, target, label, style in _edges(spec):
        attrs = []
        if label:
            attrs.append(f'label="{_dot_text(label)}"')
        if style == "error":
            attrs.append("style=dashed")
        suffix = f" [{', '.join(attrs)}]" if attrs else ""
        lines.append(f'  "{_dot_text(source)}" -> "{_dot_text(target)}"{suffix};')
    lines.append("}")
    return "\n".join(lines) + "\n"


def ritual_graph(spec: RitualSpec, format: Literal["mermaid", "dot"] | str = "mermaid") -> str:
    """Draw a ritual's graph as text.

    Args:
        spec: The ritual (from ``load_ritual``).
        format: ``"mermaid"`` (a ``flowchart TD`` that renders on GitHub) or ``"dot"``.

    Returns:
        The diagram's source text, ending with a newline.

    Raises:
        ValueError: For an unknown format.
    """
    if format == "mermaid":
        return _mermaid(spec)
    if format == "dot":
        return _dot(spec)
    raise ValueError(f"unknown graph format {format!r}; use mermaid or dot")
