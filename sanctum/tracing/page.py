"""The viewer's page: one HTML document, inline CSS, no script, no external request.

A Content-Security-Policy meta tag forbids every fetch and every script, so even a
mistake in escaping could neither run code nor call out; the escaping itself is done by
every section (see :mod:`sanctum.tracing.sections`). Collapsing uses ``<details>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sanctum.tracing._text import esc
from sanctum.tracing.layout import layout_graph, render_svg
from sanctum.tracing.sections import (
    SECTION_TITLES,
    aether_section,
    body_sections,
    sigil_stats,
    summary_section,
)

__all__ = ["CONTENT_SECURITY_POLICY", "build_page", "graph_section", "observed_manifest"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
"""Forbids scripts and every network request; allows only the inline stylesheet."""


def observed_manifest(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A stand-in graph for traces without a manifest: the Sigils seen, in order.

    Args:
        doc: A trace document.

    Returns:
        ``{"sigils": [...], "edges": {}, "conditional_edges": {}}``.
    """
    names: list[str] = []
    steps = doc.get("supersteps")
    for step in steps if isinstance(steps, list) else []:
        sigils = step.get("sigils") if isinstance(step, Mapping) else None
        for entry in sigils if isinstance(sigils, list) else []:
            name = entry.get("sigil") if isinstance(entry, Mapping) else None
            if name is not None and str(name) not in names:
                names.append(str(name))
    return {"sigils": names, "edges": {}, "conditional_edges": {}}


def graph_section(doc: Mapping[str, Any]) -> str:
    """The graph as an inline SVG with a legend.

    Args:
        doc: A trace document; its ``graph`` manifest, or the Sigils seen when absent.

    Returns:
        The section's HTML.
    """
    manifest = doc.get("graph")
    note = ""
    if not isinstance(manifest, Mapping):
        manifest = observed_manifest(doc)
        note = '<p class="empty">No manifest recorded: showing the Sigils that ran.</p>'
    svg = render_svg(layout_graph(manifest), sigil_stats(doc))
    legend = (
        '<ul class="legend">'
        '<li><span class="key edge-key"></span>edge</li>'
        '<li><span class="key cond-key"></span>conditional edge (◆ at the router)</li>'
        '<li><span class="key back-key"></span>back-edge (cycle), dashed</li>'
        '<li><span class="key node-completed"></span>completed</li>'
        '<li><span class="key node-failed"></span>failed / rejected</li>'
        '<li><span class="key node-interrupted"></span>interrupted</li>'
        '<li><span class="key node-idle"></span>did not run</li>'
        "</ul>"
    )
    return (
        f'<section id="graph" class="section section-graph"><h2>Graph</h2>{note}'
        f'<div class="graph-box">{svg}</div>{legend}</section>'
    )


def build_page(doc: Mapping[str, Any], *, source: str = "") -> str:
    """Assemble the whole HTML document of a trace.

    Args:
        doc: A trace document (format in :mod:`sanctum.tracing.document`).
        source: The trace file's name, shown in the header (escaped).

    Returns:
        The HTML text.
    """
    invocation = str(doc.get("invocation_id") or "unknown invocation")
    nav = "".join(f'<a href="#{key}">{title}</a>' for key, title in SECTION_TITLES.items())
    origin = f'<p class="source">{esc(source)}</p>' if source else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        # attribute names are case-insensitive; upper case keeps the page free of any
        # "http" text, so a grep for URLs finds nothing at all
        f'<meta HTTP-EQUIV="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>sanctum trace · {esc(invocation)}</title>"
        f"<style>{_CSS}</style></head><body>"
        f"<header><h1>sanctum trace <code>{esc(invocation)}</code></h1>{origin}"
        f"<nav>{nav}</nav></header><main>"
        f"{summary_section(doc)}{graph_section(doc)}{body_sections(doc)}{aether_section(doc)}"
        "</main><footer>Rendered by sanctum — a self-contained file: no server, no network."
        "</footer></body></html>\n"
    )


_CSS = """
:root{--bg:#f7f6f3;--fg:#1f2328;--muted:#6b7280;--card:#fff;--line:#d8d4cc;
--ok:#2f855a;--bad:#c53030;--pause:#b7791f;--cond:#6b46c1;--idle:#a0aec0;--accent:#2b6cb0}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;
background:var(--bg);color:var(--fg)}
header{background:#23232b;color:#f1f1f1;padding:14px 24px}
header h1{margin:0;font-size:18px;font-weight:600}
header code{color:#f6e05e}
header .source{margin:2px 0 0;color:#bbb;font-size:12px}
nav{margin-top:8px;display:flex;flex-wrap:wrap;gap:12px}
nav a{color:#cbd5e0;text-decoration:none;font-size:13px}
nav a:hover{color:#fff;text-decoration:underline}
main{max-width:1200px;margin:0 auto;padding:16px 24px}
.section{background:var(--card);border:1px solid var(--line);border-radius:8px;
padding:12px 16px;margin:0 0 16px}
.section h2,.section h3{margin:0 0 10px;font-size:16px}
.count{display:inline-block;min-width:22px;padding:0 6px;border-radius:10px;
background:#edf2f7;color:var(--muted);font-size:12px;text-align:center}
.empty{color:var(--muted);font-style:italic;margin:4px 0}
dl{display:grid;grid-template-columns:160px 1fr;gap:4px 12px;margin:0}
dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f4f4f0;border:1px solid #e6e2da;border-radius:6px;padding:8px;
overflow:auto;max-height:420px;white-space:pre-wrap;overflow-wrap:anywhere}
td code{white-space:pre-wrap;overflow-wrap:anywhere}
.status{padding:1px 8px;border-radius:10px;color:#fff;font-weight:600}
.status-completed{background:var(--ok)}.status-failed{background:var(--bad)}
.status-interrupted{background:var(--pause)}.status-incomplete,.status-unknown{background:var(--idle)}
.sigil-name{font-weight:600;color:var(--accent)}
details{border-top:1px solid #eee;padding:4px 0}
summary{cursor:pointer}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;border-bottom:1px solid #eee;padding:4px 8px}
th{color:var(--muted);font-weight:600;font-size:12px}
.repaired{color:var(--pause);font-size:12px}
.call-ok{color:var(--ok)}.call-error{color:var(--bad)}.call-rejected{color:var(--bad)}
.call-pending{color:var(--pause)}
.graph-box{overflow:auto}
svg.graph{display:block;margin:0 auto}
svg .node rect{fill:#fff;stroke:#4a5568;stroke-width:1.5}
svg .node.start rect,svg .node.end rect{fill:#2d3748;stroke:#2d3748}
svg .node.start text,svg .node.end text{fill:#fff}
svg .node.completed rect{fill:#e6f4ea;stroke:var(--ok)}
svg .node.failed rect,svg .node.rejected rect{fill:#fde8e8;stroke:var(--bad)}
svg .node.interrupted rect,svg .node.aborted rect,
svg .node.running rect{fill:#fdf3e1;stroke:var(--pause)}
svg .node.idle rect{fill:#f7fafc;stroke:var(--idle);stroke-dasharray:3 3}
svg .node.join rect{stroke-width:3.5}
svg text{font:13px system-ui,sans-serif;text-anchor:middle;fill:var(--fg)}
svg text.stat{font-size:11px;fill:var(--muted)}
svg .edge{fill:none;stroke:#4a5568;stroke-width:1.4}
svg .edge.cond{stroke:var(--cond)}
svg .edge.back{stroke-dasharray:6 4}
svg .arrowhead{fill:#4a5568}svg .arrowhead.cond{fill:var(--cond)}
svg .dynamic{fill:var(--cond)}
.legend{display:flex;flex-wrap:wrap;gap:14px;list-style:none;padding:0;margin:8px 0 0;
color:var(--muted);font-size:12px}
.key{display:inline-block;width:26px;height:10px;margin-right:6px;vertical-align:middle}
.edge-key{border-top:2px solid #4a5568;height:0}
.cond-key{border-top:2px solid var(--cond);height:0}
.back-key{border-top:2px dashed #4a5568;height:0}
.node-completed{background:#e6f4ea;border:1px solid var(--ok)}
.node-failed{background:#fde8e8;border:1px solid var(--bad)}
.node-interrupted{background:#fdf3e1;border:1px solid var(--pause)}
.node-idle{background:#f7fafc;border:1px dashed var(--idle)}
.step{border-top:1px solid #eee;padding:6px 0}
.step-head{margin-bottom:4px}
.frontier{color:var(--muted)}
.lane{display:grid;grid-template-columns:180px 1fr 220px;gap:8px;align-items:center;
margin:2px 0}
.lane-name{font-weight:600;color:var(--accent);overflow:hidden;text-overflow:ellipsis;
white-space:nowrap}
.track{position:relative;height:14px;background:#f0efe9;border-radius:4px}
.bar{position:absolute;top:0;bottom:0;border-radius:4px;background:var(--ok)}
.bar.failed,.bar.rejected{background:var(--bad)}
.bar.interrupted,.bar.aborted,.bar.running{background:var(--pause)}
.dur{color:var(--muted);font-size:12px}
.circle{margin:6px 0;padding-left:8px;border-left:3px solid var(--cond)}
footer{color:var(--muted);font-size:12px;text-align:center;padding:12px}
"""
