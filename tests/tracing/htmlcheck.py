"""Parse a rendered viewer with the standard library's HTML parser, for assertions."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Parsed:
    """Start tags (with attributes), visible text, and ids of one HTML document."""

    tags: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def count(self, tag: str) -> int:
        return sum(1 for name, _ in self.tags if name == tag)

    @property
    def ids(self) -> set[str]:
        return {str(attrs["id"]) for _, attrs in self.tags if attrs.get("id")}

    @property
    def event_handlers(self) -> list[str]:
        return [n for _, attrs in self.tags for n in attrs if n.lower().startswith("on")]

    @property
    def urls(self) -> list[str]:
        keys = ("src", "href", "xlink:href", "action", "srcset", "poster", "data")
        return [str(v) for _, attrs in self.tags for k, v in attrs.items() if k in keys and v]

    @property
    def all_text(self) -> str:
        return "".join(self.text)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parsed = Parsed()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.parsed.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.parsed.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.parsed.text.append(data)


def parse(html: str) -> Parsed:
    collector = _Collector()
    collector.feed(html)
    collector.close()
    return collector.parsed
