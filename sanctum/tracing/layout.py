"""The graph of a trace as a static SVG, laid out in Python.

Simple hierarchical layers from START to END. A depth-first walk from START finds the
back-edges — the edges that close a cycle; they are drawn dashed, in lanes right of the
graph. The remaining edges form a DAG, layered by a breadth-first (Kahn) walk from
START: every Sigil (node) sits one layer below its deepest predecessor, so edges always
point down. END sits alone in the last layer; Sigils only reachable through dynamic
routers or fallbacks go just above it. Within a layer, nodes keep their bound order,
then are nudged under their predecessors (one barycentre pass). Conditional edges are
drawn in their own colour and start with a diamond.

Every name that reaches the SVG — in text, ``<title>`` or attributes — is escaped.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sanctum.tracing._text import esc, fmt_duration, shorten

__all__ = ["END", "START", "Edge", "GraphLayout", "Node", "layout_graph", "render_svg"]

START = "__start__"
END = "__end__"

_LAYER_GAP = 96.0
_NODE_HEIGHT = 46.0
_NODE_GAP = 28.0
_MARGIN = 24.0
_LANE_GAP = 16.0
_CHAR_WIDTH = 7.4
_MAX_LABEL = 28


@dataclass(frozen=True, slots=True)
class Node:
    """One box of the drawing: a Sigil, START or END, with its position (px)."""

    name: str
    layer: int
    x: float
    y: float
    width: float
    height: float = _NODE_HEIGHT
    kind: str = "sigil"

    @property
    def cx(self) -> float:
        """Horizontal centre, px."""
        return self.x + self.width / 2

    @property
    def cy(self) -> float:
        """Vertical centre, px."""
        return self.y + self.height / 2


@dataclass(frozen=True, slots=True)
class Edge:
    """One arrow: ``conditional`` for router edges, ``back`` for cycle edges."""

    source: str
    target: str
    conditional: bool = False
    back: bool = False


@dataclass(slots=True)
class GraphLayout:
    """Positions of every node and the edges between them, ready to draw.

    ``dynamic`` names routers whose targets are unknown (``["*"]`` in the manifest);
    ``joins`` the Sigils bound with ``join="all"``; ``width``/``height`` in px.
    """

    nodes: dict[str, Node]
    edges: list[Edge]
    width: float
    height: float
    dynamic: set[str] = field(default_factory=set)
    joins: set[str] = field(default_factory=set)


def layout_graph(manifest: Mapping[str, Any] | None) -> GraphLayout:
    """Lay out a Rite's manifest in layers from START to END.

    Args:
        manifest: ``{"sigils": [...], "edges": {src: [dst]}, "conditional_edges":
            {src: [dst] or ["*"]}, "joins": [...], "entry": [...]}``; missing or
            malformed parts are treated as empty.

    Returns:
        The layout: node boxes in px and classified edges.
    """
    manifest = manifest if isinstance(manifest, Mapping) else {}
    sigils = _names(manifest.get("sigils"))
    edges, dynamic = _edges(manifest, sigils)
    for edge in edges:
        for name in (edge.source, edge.target):
            if name not in (START, END) and name not in sigils:
                sigils.append(name)
    back = _back_edges(sigils, edges)
    layers = _layers(sigils, edges, back)
    edges = [
        Edge(e.source, e.target, e.conditional, (e.source, e.target) in back or _upward(e, layers))
        for e in edges
    ]
    order = _order(sigils, edges, layers)
    nodes, width, height = _place(order, layers, sum(1 for e in edges if e.back))
    joins = {name for name in _names(manifest.get("joins")) if name in nodes}
    return GraphLayout(nodes, edges, width, height, dynamic & set(nodes), joins)


def _names(value: Any) -> list[str]:
    if not isinstance(value, list | tuple):
        return []
    seen: list[str] = []
    for item in value:
        name = str(item)
        if name not in seen and name not in (START, END):
            seen.append(name)
    return seen


def _edges(manifest: Mapping[str, Any], sigils: list[str]) -> tuple[list[Edge], set[str]]:
    edges: list[Edge] = []
    dynamic: set[str] = set()
    seen: set[tuple[str, str]] = set()

    def add(source: str, target: str, conditional: bool) -> None:
        if (source, target) not in seen:
            seen.add((source, target))
            edges.append(Edge(source, target, conditional))

    static = manifest.get("edges")
    if isinstance(static, Mapping):
        for source, targets in static.items():
            for target in _names_with_end(targets):
                add(str(source), target, False)
    for entry in _names(manifest.get("entry")):
        add(START, entry, False)
    conditional = manifest.get("conditional_edges")
    if isinstance(conditional, Mapping):
        for source, targets in conditional.items():
            for target in _names_with_end(targets):
                if target == "*":
                    dynamic.add(str(source))
                else:
                    add(str(source), target, True)
    if not any(e.source == START for e in edges) and sigils:
        add(START, sigils[0], False)
    return edges, dynamic


def _names_with_end(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list | tuple):
        return []
    return [str(item) for item in value]


def _back_edges(sigils: list[str], edges: list[Edge]) -> set[tuple[str, str]]:
    """Edges that close a cycle, found by an iterative depth-first walk from START."""
    successors: dict[str, list[str]] = {}
    for edge in edges:
        successors.setdefault(edge.source, []).append(edge.target)
    back: set[tuple[str, str]] = set()
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    for root in [START, *sigils]:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(successors.get(root, [])))]
        while stack:
            node, pending = stack[-1]
            target = next(pending, None)
            if target is None:
                state[node] = 2
                stack.pop()
            elif state.get(target) == 1:
                back.add((node, target))
            elif target not in state:
                state[target] = 1
                stack.append((target, iter(successors.get(target, []))))
    return back


def _layers(sigils: list[str], edges: list[Edge], back: set[tuple[str, str]]) -> dict[str, int]:
    """Breadth-first topological layering: one layer below the deepest predecessor."""
    forward = [e for e in edges if (e.source, e.target) not in back and e.target != END]
    successors: dict[str, list[str]] = {}
    for edge in forward:
        successors.setdefault(edge.source, []).append(edge.target)
    reachable = {START}
    queue = deque([START])
    while queue:
        for target in successors.get(queue.popleft(), []):
            if target not in reachable:
                reachable.add(target)
                queue.append(target)
    layers = {START: 0}
    _relax(layers, [START], forward, reachable)
    deepest = max(layers.values())
    stragglers = [name for name in sigils if name not in layers]
    if stragglers:  # reached only through dynamic routers or fallbacks: below the rest
        waiting = set(stragglers)
        indegree = {n: 0 for n in stragglers}
        for edge in forward:
            if edge.source in waiting and edge.target in waiting:
                indegree[edge.target] += 1
        roots = [n for n in stragglers if indegree[n] == 0] or stragglers[:1]
        for name in roots:
            layers[name] = deepest + 1
        _relax(layers, roots, forward, waiting)
        for name in stragglers:
            layers.setdefault(name, deepest + 1)
    layers[END] = max(layers.values()) + 1
    return layers


def _upward(edge: Edge, layers: Mapping[str, int]) -> bool:
    """An edge drawn against the flow (e.g. out of a straggler): routed like a back-edge."""
    if edge.target == END:
        return False
    return layers.get(edge.target, 0) <= layers.get(edge.source, 0)


def _relax(layers: dict[str, int], roots: list[str], forward: list[Edge], scope: set[str]) -> None:
    """Kahn's walk over the acyclic ``forward`` edges inside ``scope``, from ``roots``."""
    indegree = {name: 0 for name in scope}
    successors: dict[str, list[str]] = {}
    for edge in forward:
        if edge.source in scope and edge.target in scope:
            indegree[edge.target] += 1
            successors.setdefault(edge.source, []).append(edge.target)
    queue = deque(name for name in roots if indegree.get(name, 0) == 0)
    while queue:
        node = queue.popleft()
        for target in successors.get(node, []):
            layers[target] = max(layers.get(target, 0), layers[node] + 1)
            indegree[target] -= 1
            if indegree[target] == 0:
                queue.append(target)


def _order(sigils: list[str], edges: list[Edge], layers: Mapping[str, int]) -> list[list[str]]:
    rank = {name: index for index, name in enumerate([START, *sigils, END])}
    grouped: list[list[str]] = [[] for _ in range(max(layers.values()) + 1)]
    for name in [START, *sigils, END]:
        grouped[layers[name]].append(name)
    position: dict[str, float] = {}
    predecessors: dict[str, list[str]] = {}
    for edge in edges:
        if not edge.back:
            predecessors.setdefault(edge.target, []).append(edge.source)
    for layer in grouped:

        def weight(name: str) -> tuple[float, int]:
            known = [position[p] for p in predecessors.get(name, []) if p in position]
            centre = sum(known) / len(known) if known else float(rank[name])
            return (centre, rank[name])

        layer.sort(key=weight)
        for index, name in enumerate(layer):
            position[name] = index - (len(layer) - 1) / 2
    return grouped


def _node_width(name: str) -> float:
    label = _label(name)
    return max(84.0, min(len(label) * _CHAR_WIDTH + 30.0, 240.0))


def _label(name: str) -> str:
    return {START: "START", END: "END"}.get(name, shorten(name, _MAX_LABEL))


def _place(
    grouped: list[list[str]], layers: Mapping[str, int], lanes: int
) -> tuple[dict[str, Node], float, float]:
    rows = [[_node_width(name) for name in layer] for layer in grouped]
    row_widths = [sum(widths) + _NODE_GAP * max(len(widths) - 1, 0) for widths in rows]
    inner = max(row_widths, default=0.0)
    nodes: dict[str, Node] = {}
    for index, layer in enumerate(grouped):
        x = _MARGIN + (inner - row_widths[index]) / 2
        y = _MARGIN + index * _LAYER_GAP
        for name, width in zip(layer, rows[index], strict=True):
            kind = "start" if name == START else "end" if name == END else "sigil"
            nodes[name] = Node(name, layers[name], x, y, width, kind=kind)
            x += width + _NODE_GAP
    width = _MARGIN * 2 + inner + (lanes * _LANE_GAP + 24.0 if lanes else 0.0)
    height = _MARGIN * 2 + (len(grouped) - 1) * _LAYER_GAP + _NODE_HEIGHT
    return nodes, width, height


def render_svg(layout: GraphLayout, stats: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """Draw the layout as an inline ``<svg>`` element (no external references).

    Args:
        layout: From :func:`layout_graph`.
        stats: Optional ``{sigil: {"runs": int, "duration": seconds, "status": str}}``
            shown under each name; ``status`` picks the node's colour class
            (``completed``, ``failed``, ``interrupted``, ``rejected``, ``aborted``).

    Returns:
        SVG markup; every name is escaped.
    """
    stats = stats or {}
    right = max((n.x + n.width for n in layout.nodes.values()), default=0.0)
    parts = [
        f'<svg class="graph" role="img" aria-label="Graph of the ritual" '
        f'width="{layout.width:.0f}" height="{layout.height:.0f}" '
        f'viewBox="0 0 {layout.width:.1f} {layout.height:.1f}">',
        _DEFS,
    ]
    ports = _ports(layout)
    lane = 0
    for edge in layout.edges:
        source, target = layout.nodes.get(edge.source), layout.nodes.get(edge.target)
        if source is None or target is None:
            continue
        if edge.back and edge.source != edge.target:
            lane += 1
        lane_x = right + 12.0 + lane * _LANE_GAP
        parts.append(_edge_svg(edge, source, target, lane_x, ports.get(edge)))
    for node in layout.nodes.values():
        parts.append(_node_svg(node, layout, stats.get(node.name)))
    parts.append("</svg>")
    return "".join(parts)


_DEFS = (
    "<defs>"
    '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
    'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
    'class="arrowhead"/></marker>'
    '<marker id="arrow-cond" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
    'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
    'class="arrowhead cond"/></marker>'
    '<marker id="diamond" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="8" '
    'markerHeight="8" orient="auto"><path d="M0,5 L5,0 L10,5 L5,10 z" '
    'class="arrowhead cond"/></marker>'
    "</defs>"
)


def _ports(layout: GraphLayout) -> dict[Edge, tuple[float, float]]:
    """Spread the ends of forward edges along their nodes' borders, ordered by x (px)."""
    outgoing: dict[str, list[Edge]] = {}
    incoming: dict[str, list[Edge]] = {}
    for edge in layout.edges:
        if not edge.back and edge.source in layout.nodes and edge.target in layout.nodes:
            outgoing.setdefault(edge.source, []).append(edge)
            incoming.setdefault(edge.target, []).append(edge)
    starts: dict[Edge, float] = {}
    ends: dict[Edge, float] = {}
    for name, group in outgoing.items():
        group.sort(key=lambda e: layout.nodes[e.target].cx)
        starts.update(_spread(layout.nodes[name], group))
    for name, group in incoming.items():
        group.sort(key=lambda e: layout.nodes[e.source].cx)
        ends.update(_spread(layout.nodes[name], group))
    return {edge: (starts[edge], ends[edge]) for edge in starts if edge in ends}


def _spread(node: Node, edges: list[Edge]) -> dict[Edge, float]:
    usable = node.width * 0.6
    step = usable / len(edges)
    first = node.cx - usable / 2 + step / 2
    return {edge: first + index * step for index, edge in enumerate(edges)}


def _edge_svg(
    edge: Edge,
    source: Node,
    target: Node,
    lane_x: float,
    port: tuple[float, float] | None = None,
) -> str:
    if edge.source == edge.target:
        x, y = source.x + source.width, source.cy
        d = (
            f"M{x:.1f},{y - 9:.1f} C{x + 34:.1f},{y - 26:.1f} "
            f"{x + 34:.1f},{y + 26:.1f} {x:.1f},{y + 9:.1f}"
        )
    elif edge.back:
        sx, sy = source.x + source.width, source.cy
        tx, ty = target.x + target.width, target.cy
        d = f"M{sx:.1f},{sy:.1f} L{lane_x:.1f},{sy:.1f} L{lane_x:.1f},{ty:.1f} L{tx:.1f},{ty:.1f}"
    else:
        sx, tx = port if port is not None else (source.cx, target.cx)
        sy, ty = source.y + source.height, target.y
        bend = (ty - sy) / 2
        d = (
            f"M{sx:.1f},{sy:.1f} C{sx:.1f},{sy + bend:.1f} "
            f"{tx:.1f},{ty - bend:.1f} {tx:.1f},{ty:.1f}"
        )
    classes = ["edge"]
    if edge.conditional:
        classes.append("cond")
    if edge.back:
        classes.append("back")
    marker = "arrow-cond" if edge.conditional else "arrow"
    start = ' marker-start="url(#diamond)"' if edge.conditional else ""
    kind = ("conditional " if edge.conditional else "") + ("back-edge" if edge.back else "edge")
    return (
        f'<path class="{" ".join(classes)}" d="{d}" marker-end="url(#{marker})"{start} '
        f'data-source="{esc(edge.source)}" data-target="{esc(edge.target)}">'
        f"<title>{esc(kind)}: {esc(_label(edge.source))} → {esc(_label(edge.target))}</title>"
        "</path>"
    )


def _node_svg(node: Node, layout: GraphLayout, stat: Mapping[str, Any] | None) -> str:
    classes = ["node", node.kind]
    status = str(stat.get("status", "")) if stat else ""
    if status in _STATUS_CLASSES:
        classes.append(status)
    elif node.kind == "sigil":
        classes.append("idle")
    if node.name in layout.joins:
        classes.append("join")
    radius = node.height / 2 if node.kind != "sigil" else 8.0
    title = node.name
    if node.name in layout.dynamic:
        title += " — routes anywhere (dynamic router)"
    if node.name in layout.joins:
        title += ' — join="all"'
    parts = [
        f'<g class="{" ".join(classes)}" data-sigil="{esc(node.name)}">',
        f"<title>{esc(title)}</title>",
        f'<rect x="{node.x:.1f}" y="{node.y:.1f}" width="{node.width:.1f}" '
        f'height="{node.height:.1f}" rx="{radius:.1f}"/>',
    ]
    label_y = node.cy - 3 if stat else node.cy + 4
    parts.append(
        f'<text class="label" x="{node.cx:.1f}" y="{label_y:.1f}">{esc(_label(node.name))}</text>'
    )
    if stat:
        runs = stat.get("runs", 0)
        line = f"×{runs} · {fmt_duration(stat.get('duration'))}"
        parts.append(
            f'<text class="stat" x="{node.cx:.1f}" y="{node.cy + 13:.1f}">{esc(line)}</text>'
        )
    if node.name in layout.dynamic:
        x, y = node.cx, node.y + node.height
        parts.append(
            f'<path class="dynamic" d="M{x - 6:.1f},{y:.1f} L{x:.1f},{y - 6:.1f} '
            f'L{x + 6:.1f},{y:.1f} L{x:.1f},{y + 6:.1f} z"/>'
        )
    parts.append("</g>")
    return "".join(parts)


_STATUS_CLASSES = frozenset(
    {"completed", "failed", "interrupted", "rejected", "aborted", "running"}
)
