# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reads a topology picture back: what was drawn, where, and whether it is legible."""

from __future__ import annotations

import itertools
from xml.etree import ElementTree

SVG = "{http://www.w3.org/2000/svg}"


class Picture:
    """A rendered topology SVG, parsed."""

    def __init__(self, text):
        self.text = text
        self.root = ElementTree.fromstring(text)
        assert self.root.tag == SVG + "svg"
        self.view_box = [float(value) for value in self.root.get("viewBox").split()]

    def groups(self, css_class):
        return [group for group in self.root.iter(SVG + "g") if css_class in (group.get("class") or "").split()]

    def attributes(self, css_class, name):
        return [group.get(name) for group in self.groups(css_class)]

    def links(self, kind=None):
        """(kind, from, to) of every drawn link, optionally of one kind."""
        return [(group.get("data-kind"), group.get("data-from"), group.get("data-to")) for group in self.groups("link")
                if kind is None or group.get("data-kind") == kind]

    def texts(self, group=None):
        return ["".join(element.itertext()) for element in (group if group is not None else self.root).iter(SVG + "text")]

    @staticmethod
    def frame(group):
        """(x, y, width, height) of a group's first rectangle: the tile or box it draws."""
        rect = group.find(SVG + "rect")
        return tuple(float(rect.get(name)) for name in ("x", "y", "width", "height"))

    def tiles(self):
        return dict((("gpu", group.get("data-gpu")) if "gpu" in group.get("class") else ("nic", group.get("data-nic")),
                     self.frame(group)) for group in self.groups("gpu") + self.groups("nic"))

    def member_tiles(self, group):
        return [self.frame(tile) for tile in group.iter(SVG + "g") if tile.get("class") in ("gpu", "nic")]


def overlaps(first, second):
    x1, y1, w1, h1 = first
    x2, y2, w2, h2 = second
    return x1 < x2 + w2 and x2 < x1 + w1 and y1 < y2 + h2 and y2 < y1 + h1


def inside(inner, outer):
    x1, y1, w1, h1 = inner
    x2, y2, w2, h2 = outer
    return x1 >= x2 and y1 >= y2 and x1 + w1 <= x2 + w2 and y1 + h1 <= y2 + h2


def assert_legible(picture):
    """No two GPU/NIC tiles overlap, each lies inside the viewBox and inside its NUMA box."""
    tiles = picture.tiles()
    for (first, a), (second, b) in itertools.combinations(sorted(tiles.items()), 2):
        assert not overlaps(a, b), "%s overlaps %s" % (first, second)
    for name, tile in tiles.items():
        assert inside(tile, picture.view_box), "%s lies outside the viewBox" % (name,)
    for box in picture.groups("numa-node") + picture.groups("numa-unknown"):
        for tile in picture.member_tiles(box):
            assert inside(tile, picture.frame(box))
