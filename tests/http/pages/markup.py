"""A page's markup as the HTML tokenizer of the standard library reads it: its elements with
their attributes, and its text (entity references decoded), to assert on what a browser builds."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None]


@dataclass
class Parsed(HTMLParser):
    elements: list[Element] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.texts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.texts)

    def tags(self, tag: str) -> list[Element]:
        return [element for element in self.elements if element.tag == tag]


def parse(markup: str) -> Parsed:
    parsed = Parsed()
    parsed.feed(markup)
    parsed.close()
    return parsed
