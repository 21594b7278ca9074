# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small element tree of an HTML page, built with the standard library's html.parser."""

from __future__ import annotations

from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Element:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.content = [], []  # content: text and child elements, in document order

    def iter(self, tag=None):
        if tag is None or self.tag == tag:
            yield self
        for child in self.children:
            yield from child.iter(tag)

    def find_all(self, tag=None, **attrs):
        """Elements of a tag whose attributes hold the given values (class_: one of the classes)."""
        wanted_class = attrs.pop("class_", None)
        return [element for element in self.iter(tag)
                if all(element.attrs.get(name.replace("_", "-")) == value for name, value in attrs.items())
                and (wanted_class is None or wanted_class in (element.attrs.get("class") or "").split())]

    def all_text(self):
        return "".join(item if isinstance(item, str) else item.all_text() for item in self.content)

    def add(self, child):
        self.children.append(child)
        self.content.append(child)


class _Builder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.current = Element("#document", {})
        self.unclosed = []

    def handle_starttag(self, tag, attrs):
        element = Element(tag, attrs, self.current)
        self.current.add(element)
        if tag not in VOID:
            self.current = element

    def handle_startendtag(self, tag, attrs):
        self.current.add(Element(tag, attrs, self.current))

    def handle_endtag(self, tag):
        element = self.current
        while element is not None and element.tag != tag:
            element = element.parent
        assert element is not None, "</%s> closes nothing" % tag
        if element is not self.current:
            self.unclosed.append(self.current.tag)
        self.current = element.parent

    def handle_data(self, data):
        self.current.content.append(data)


def parse(text):
    """The page's root element; fails when an end tag closes nothing or leaves an element open."""
    builder = _Builder()
    builder.feed(text)
    builder.close()
    assert not builder.unclosed, "unclosed elements: %s" % builder.unclosed
    assert builder.current is builder.root, "unclosed <%s>" % builder.current.tag
    return builder.root
