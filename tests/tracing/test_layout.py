"""The graph layout: BFS layers from START to END, back-edges, conditional edges, SVG."""

from __future__ import annotations

import itertools
from xml.etree import ElementTree

from sanctum.tracing.layout import END, START, layout_graph, render_svg
from tests.tracing.scenes import MANIFEST

CYCLE = {
    "sigils": ["think", "act", "observe", "report"],
    "edges": {START: ["think"], "act": ["observe"], "observe": ["think"], "report": [END]},
    "conditional_edges": {"think": ["act", "report"]},
}


def test_layers_follow_breadth_first_order_from_start_to_end() -> None:
    layout = layout_graph(CYCLE)
    layer = {name: node.layer for name, node in layout.nodes.items()}
    assert layer == {START: 0, "think": 1, "act": 2, "report": 2, "observe": 3, END: 4}
    ys = {name: node.y for name, node in layout.nodes.items()}
    assert ys[START] < ys["think"] < ys["act"] == ys["report"] < ys["observe"] < ys[END]


def test_back_edges_and_conditional_edges_are_classified() -> None:
    edges = {(e.source, e.target): e for e in layout_graph(CYCLE).edges}
    assert edges[("observe", "think")].back
    assert not edges[("observe", "think")].conditional
    assert edges[("think", "act")].conditional
    assert not edges[("think", "act")].back
    assert not edges[("act", "observe")].back
    assert not edges[("report", END)].back


def test_fan_out_nodes_share_a_layer_without_overlapping() -> None:
    layout = layout_graph(MANIFEST)
    plan, fetch = layout.nodes["plan"], layout.nodes["fetch"]
    assert plan.layer == fetch.layer == 1
    assert plan.x + plan.width <= fetch.x or fetch.x + fetch.width <= plan.x
    assert layout.joins == {"gate"}
    assert layout.nodes[END].layer == max(n.layer for n in layout.nodes.values())
    for node in layout.nodes.values():
        assert node.x >= 0
        assert node.x + node.width <= layout.width
        assert node.y >= 0
        assert node.y + node.height <= layout.height


def test_self_loops_and_dynamic_routers() -> None:
    layout = layout_graph(
        {
            "sigils": ["loop", "router", "fallback"],
            "edges": {START: ["loop"], "loop": ["loop", "router"]},
            "conditional_edges": {"router": ["*"]},
        }
    )
    edges = {(e.source, e.target): e for e in layout.edges}
    assert edges[("loop", "loop")].back
    assert layout.dynamic == {"router"}
    # unreachable by known edges: placed after the deepest layer, before END
    assert layout.nodes["fallback"].layer == layout.nodes["router"].layer + 1
    assert layout.nodes[END].layer == layout.nodes["fallback"].layer + 1


def test_entry_list_and_missing_start_edges() -> None:
    layout = layout_graph({"sigils": ["a", "b"], "entry": ["b"], "edges": {"b": ["a"]}})
    assert layout.nodes["b"].layer == 1
    assert layout.nodes["a"].layer == 2
    bare = layout_graph({"sigils": ["only"]})
    assert [(e.source, e.target) for e in bare.edges] == [(START, "only")]


def test_malformed_manifests_do_not_raise() -> None:
    for manifest in (None, {}, {"sigils": "nope", "edges": [1, 2]}, {"edges": {"a": 5}}):
        layout = layout_graph(manifest)  # type: ignore[arg-type]
        assert START in layout.nodes
        assert END in layout.nodes
    odd = layout_graph({"edges": {START: ["ghost"], "ghost": END}})
    assert "ghost" in odd.nodes


def test_svg_is_well_formed_and_marks_edges() -> None:
    svg = render_svg(
        layout_graph(CYCLE), {"think": {"runs": 3, "duration": 0.012, "status": "completed"}}
    )
    root = ElementTree.fromstring(svg)
    assert root.tag == "svg"
    paths = [p for p in root.iter("path") if "edge" in p.get("class", "").split()]
    back = [p for p in paths if "back" in p.get("class", "").split()]
    cond = [p for p in paths if "cond" in p.get("class", "").split()]
    assert [(p.get("data-source"), p.get("data-target")) for p in back] == [("observe", "think")]
    assert {(p.get("data-source"), p.get("data-target")) for p in cond} == {
        ("think", "act"),
        ("think", "report"),
    }
    assert all(p.get("marker-start") == "url(#diamond)" for p in cond)
    groups = {g.get("data-sigil"): g for g in root.iter("g")}
    assert set(groups) == {START, END, "think", "act", "observe", "report"}
    assert "completed" in groups["think"].get("class", "")
    assert "idle" in groups["act"].get("class", "")
    texts = "".join(t.text or "" for t in groups["think"].iter("text"))
    assert "×3" in texts
    assert "12.0 ms" in texts
    assert "http" not in svg


def test_every_name_is_escaped_in_text_and_attributes() -> None:
    evil = '"><script>alert(1)</script></svg><g onload="x'
    svg = render_svg(
        layout_graph({"sigils": [evil], "edges": {START: [evil], evil: [END]}}),
        {evil: {"runs": 1, "duration": 0.5, "status": '"><b>'}},
    )
    assert "<script" not in svg
    assert "</svg><g" not in svg
    assert "<b>" not in svg
    root = ElementTree.fromstring(svg)  # still well-formed
    names = {g.get("data-sigil") for g in root.iter("g")}
    assert evil in names
    attributes = {name for element in root.iter() for name in element.attrib}
    assert not any(name.lower().startswith("on") for name in attributes)


def test_long_names_are_shortened_on_screen_but_kept_in_the_title() -> None:
    name = "a-very-long-sigil-name-that-goes-on-and-on-forever"
    root = ElementTree.fromstring(render_svg(layout_graph({"sigils": [name]})))
    group = next(g for g in root.iter("g") if g.get("data-sigil") == name)
    label = next(t for t in group.iter("text") if t.get("class") == "label")
    assert label.text is not None
    assert label.text.endswith("…")
    assert len(label.text) <= 28
    title = group.find("title")
    assert title is not None
    assert title.text == name


def test_only_cycle_closing_edges_are_back_edges() -> None:
    layout = layout_graph(MANIFEST)  # START→plan,fetch; plan→act; fetch,act→gate; gate⇢plan
    layer = {name: node.layer for name, node in layout.nodes.items()}
    assert layer["plan"] == layer["fetch"] == 1
    assert layer["act"] == 2
    assert layer["gate"] == 3
    back = {(e.source, e.target) for e in layout.edges if e.back}
    assert back == {("gate", "plan")}


def test_stragglers_keep_their_own_order_above_end() -> None:
    layout = layout_graph(
        {
            "sigils": ["a", "sorry", "log"],
            "edges": {START: ["a"], "a": [END], "sorry": ["log"], "log": [END]},
        }
    )
    layer = {name: node.layer for name, node in layout.nodes.items()}
    assert layer["a"] == 1
    assert layer["sorry"] == 2
    assert layer["log"] == 3
    assert layer[END] == 4
    assert not any(e.back for e in layout.edges)


def test_a_large_cycle_lays_out_without_recursion() -> None:
    names = [f"s{i}" for i in range(3000)]
    edges = {START: [names[0]], **{a: [b] for a, b in itertools.pairwise(names)}}
    edges[names[-1]] = [names[0], END]
    layout = layout_graph({"sigils": names, "edges": edges})
    assert layout.nodes[names[-1]].layer == 3000
    assert [(e.source, e.target) for e in layout.edges if e.back] == [(names[-1], names[0])]
