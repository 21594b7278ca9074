# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU topology of one node as an inline SVG picture, easier to read than ``topo -m``.

NUMA nodes are boxes holding their GPUs and NICs, the CPU list and memory in the box's
footer; CPU-less nodes are small tags below. NVLink is one fabric bar when every GPU pair
shares the same NV# kind, arcs otherwise; PIX/PXB/PHB are lines. No external references:
the picture is plain shapes and text in the page's own fonts.

Hooks for tests and scripts: ``g.numa-node[data-numa]``, ``g.gpu[data-gpu]``,
``g.nic[data-nic]``, and ``.link[data-kind]`` on every drawn link.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import html

from ansible_collections.gpuops.hardening.plugins.plugin_utils.topology_layout import NVLINK, UNKNOWN, Layout

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', Arial, sans-serif"
INK, MUTED = "#1f2328", "#57606a"
MARGIN, HEADER_H, PAD, GAP, BOX_GAP = 16, 34, 14, 12, 26
GPU_W, GPU_H = 140, 62
NIC_W, NIC_H = 100, 42
LINK_GAP = 46  # between the GPU row and the NIC row, where the PCIe lines run
FOOTER_H = 62
MIN_INNER_W = 150
PILL_H = 26
FABRIC_H = 50  # bar plus the ticks down to the GPUs
LEGEND_KIND_W = 42

# Colour and dash of each link kind; NODE and SYS only appear in the legend.
KIND_COLOURS = {"NV": "#3d8b00", "PIX": "#0b5cad", "PXB": "#0e8a96", "PHB": "#8e3ab8", "NODE": "#8a6d3b", "SYS": "#c0392b"}
KIND_MEANINGS = (
    ("NV#", "NVLink, # bonded links"),
    ("PIX", "one PCIe switch"),
    ("PXB", "several PCIe switches"),
    ("PHB", "through the CPU's PCIe host bridge"),
    ("NODE", "same box, across host bridges: no line"),
    ("SYS", "other box, across the CPU interconnect: no line"),
)


def _esc(value):
    return html.escape("%s" % (value,), quote=True)


def _num(value):
    return "%g" % round(value, 1)


def _fit(text, width, size, bold=False):
    """The text cut to what fits in width at a font size (with an ellipsis)."""
    text = "%s" % (text,)
    limit = max(int(width / (size * (0.64 if bold else 0.58))), 2)
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def _text(x, y, content, size=11, fill=INK, weight=None, anchor=None, width=None):
    attributes = ' font-weight="%s"' % weight if weight else ""
    attributes += ' text-anchor="%s"' % anchor if anchor else ""
    shown = _fit(content, width, size, bool(weight)) if width else content
    return '<text x="%s" y="%s" font-size="%s" fill="%s"%s>%s</text>' % (
        _num(x), _num(y), size, fill, attributes, _esc(shown))


def _rect(x, y, width, height, fill, stroke, radius=6, dash=None, stroke_width=1):
    return '<rect x="%s" y="%s" width="%s" height="%s" rx="%s" fill="%s" stroke="%s" stroke-width="%s"%s/>' % (
        _num(x), _num(y), _num(width), _num(height), radius, fill, stroke, stroke_width,
        ' stroke-dasharray="%s"' % dash if dash else "")


def _title(text):
    return "<title>%s</title>" % _esc(text)


def _gib(value, per_gib):
    if not isinstance(value, (int, float)) or value <= 0:
        return None
    gib = value / float(per_gib)
    return "%.1f GiB" % gib if gib < 10 else "%d GiB" % round(gib)


def short_model(name):
    """The GPU model without the vendor words every GPU shares ("NVIDIA", "Tesla")."""
    words = ("%s" % (name or "GPU")).split()
    while len(words) > 1 and words[0] in ("NVIDIA", "Tesla"):
        words = words[1:]
    return " ".join(words)


def kind_colour(kind):
    return KIND_COLOURS["NV" if NVLINK.match(kind) else kind]


# ------------------------------------------------------------------ geometry

def _spread(centres, width, inner):
    """Left edges for tiles wanting the given centres (ascending; None: anywhere, after the others).

    Tiles with a wish stay inside [0, inner] when they fit, as close to it as overlap allows;
    the others follow on the right, widening the row rather than pushing the wished ones off
    the GPU they belong under.
    """
    wished = [centre for centre in centres if centre is not None]
    lefts, right = [], -GAP
    for centre in wished:
        lefts.append(max(centre - width / 2.0, right + GAP, 0))
        right = lefts[-1] + width
    limit = inner
    for position in reversed(range(len(lefts))):
        lefts[position] = min(lefts[position], limit - width)
        limit = lefts[position] - GAP
    shift = -lefts[0] if lefts and lefts[0] < 0 else 0
    lefts = [left + shift for left in lefts]
    for _centre in centres[len(wished):]:
        lefts.append(lefts[-1] + width + GAP if lefts else 0)
    return lefts


class _Box(object):
    """One NUMA box: tile positions relative to its top-left corner."""

    def __init__(self, box_id, node, gpus, nics, layout, columns):
        self.box_id, self.node, self.gpus, self.nics = box_id, node, gpus, nics
        self.gpu_at, self.nic_at = {}, {}
        columns = max(min(len(gpus), columns), 1)
        for position, gpu in enumerate(gpus):
            row, column = divmod(position, columns)
            self.gpu_at[gpu["index"]] = (PAD + column * (GPU_W + GAP), PAD + row * (GPU_H + GAP))
        rows = -(-len(gpus) // columns)
        inner = max(columns * (GPU_W + GAP) - GAP if gpus else 0, MIN_INNER_W)
        bottom = PAD + rows * (GPU_H + GAP) - GAP if gpus else PAD + 20  # room for "no GPUs or NICs"
        top = bottom + LINK_GAP if gpus else PAD
        per_row = max((inner + GAP) // (NIC_W + GAP), 1)
        wishes = dict((nic["name"], self._nic_wish(nic, layout)) for nic in nics)
        ordered = sorted(nics, key=lambda nic: (wishes[nic["name"]] is None, wishes[nic["name"]] or 0, nic["name"]))
        for start in range(0, len(ordered), per_row):
            chunk = ordered[start:start + per_row]
            lefts = _spread([wishes[nic["name"]] for nic in chunk], NIC_W, inner)
            inner = max(inner, lefts[-1] + NIC_W)
            for nic, left in zip(chunk, lefts):
                self.nic_at[nic["name"]] = (PAD + left, top)
            bottom = top + NIC_H
            top = bottom + GAP
        self.content_h = bottom + PAD
        self.width = inner + 2 * PAD
        self.x = self.y = self.height = 0

    def _nic_wish(self, nic, layout):
        """The centre a NIC wants: under the GPUs of this box it has a close link to; None without one."""
        xs = [self.gpu_at[gpu["index"]][0] - PAD + GPU_W / 2.0 for _kind, gpu, other in layout.nic_links
              if other is nic and gpu["index"] in self.gpu_at]
        return sum(xs) / len(xs) if xs else None

    def gpu_rect(self, index):
        x, y = self.gpu_at[index]
        return self.x + x, self.y + y, GPU_W, GPU_H

    def nic_rect(self, name):
        x, y = self.nic_at[name]
        return self.x + x, self.y + y, NIC_W, NIC_H


def _ports(links, tile_of, other_x):
    """{(link position, end): x}: each tile's link ends spread along its edge, ordered by where the other end is."""
    by_tile = {}
    for position, link in enumerate(links):
        for end in (0, 1):
            by_tile.setdefault(tile_of(link, end), []).append((other_x(link, 1 - end), position, end))
    ports = {}
    for (left, _top, width, _height), ends in by_tile.items():
        ends.sort()
        for order, (_x, position, end) in enumerate(ends):
            ports[(position, end)] = left + width * (order + 1) / (len(ends) + 1.0)
    return ports


# ------------------------------------------------------------------ drawing

def _gpu_tile(gpu, rect):
    x, y, width, height = rect
    model = short_model(gpu.get("name"))
    address = (gpu.get("pci_bus_id") or "").replace("0000:", "", 1)
    details = " \u00b7 ".join(part for part in (address, _gib(gpu.get("memory_total_mib"), 1024)) if part)
    tip = "GPU %s: %s\n%s" % (gpu["index"], gpu.get("name") or "unknown model", details)
    if gpu.get("numa_affinity"):
        tip += "\nbind: NUMA %s, CPUs %s" % (",".join("%s" % n for n in gpu["numa_affinity"]), gpu.get("local_cpulist"))
    parts = ['<g class="gpu" data-gpu="%s">' % _esc(gpu["index"]), _title(tip),
             _rect(x, y, width, height, "#eef7e6", "#4f8a1d", stroke_width=1.5),
             _text(x + 9, y + 19, "GPU %s" % gpu["index"], size=14, weight="700"),
             _text(x + 9, y + 36, model, size=11, width=width - 16),
             _text(x + 9, y + 52, details, size=10, fill=MUTED, width=width - 16)]
    if gpu.get("mig_mode") == "Enabled":
        parts += [_rect(x + width - 38, y + 7, 30, 16, "#4f8a1d", "#4f8a1d", radius=8),
                  _text(x + width - 23, y + 19, "MIG", size=10, fill="#ffffff", weight="700", anchor="middle")]
    parts.append("</g>")
    return parts


def _nic_tile(nic, rect):
    x, y, width, height = rect
    netdevs = ", ".join(nic.get("netdevs") or [])
    detail = netdevs or (nic.get("pci_bus_id") or "").replace("0000:", "", 1)
    nearest = ", ".join("%s" % index for index in nic.get("nearest_gpus") or [])
    facts = [netdevs, nic.get("pci_bus_id"), "nearest GPUs %s" % nearest if nearest else ""]
    tip = "NIC %s\n%s" % (nic["name"], " \u00b7 ".join(fact for fact in facts if fact))
    return ['<g class="nic" data-nic="%s">' % _esc(nic["name"]), _title(tip),
            _rect(x, y, width, height, "#eef2f7", "#5b6b7f", radius=5),
            _text(x + 8, y + 17, nic["name"], size=12, weight="700", width=width - 12),
            _text(x + 8, y + 33, detail, size=10, fill=MUTED, width=width - 12), "</g>"]


def _box(box, layout):
    x, y, width, height = box.x, box.y, box.width, box.height
    if box.box_id == UNKNOWN:
        opening = '<g class="numa-unknown">'
        frame = _rect(x, y, width, height, "#fffaf0", "#b7791f", radius=10, dash="6 4", stroke_width=1.5)
        heading, detail = "NUMA node unknown", "the kernel gives these\nno NUMA node"
    else:
        node = box.node or {}
        opening = '<g class="numa-node" data-numa="%s">' % _esc(box.box_id)
        frame = _rect(x, y, width, height, "#f6f8fa", "#8c959f", radius=10, stroke_width=1.5)
        memory = _gib(node.get("memory_total_kib"), 1024 * 1024)
        heading = "NUMA node %s" % box.box_id
        detail = "CPUs %s" % node["cpulist"] if node.get("cpulist") else "CPUs not reported"
        detail += "\n%s memory" % memory if memory else ""
    footer_y = y + height - FOOTER_H
    parts = [opening, _title("%s\n%s" % (heading, detail)), frame,
             '<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#d0d7de"/>' % (
                 _num(x + 1), _num(footer_y), _num(x + width - 1), _num(footer_y)),
             _text(x + PAD, footer_y + 19, heading, size=12, weight="700", width=width - 2 * PAD)]
    for line, text in enumerate(detail.split("\n")):
        parts.append(_text(x + PAD, footer_y + 36 + 15 * line, text, size=11, fill=MUTED, width=width - 2 * PAD))
    if not box.gpus and not box.nics:
        parts.append(_text(x + width / 2.0, y + PAD + 14, "no GPUs or NICs", size=11, fill=MUTED, anchor="middle"))
    for gpu in box.gpus:
        parts += _gpu_tile(gpu, box.gpu_rect(gpu["index"]))
    for nic in box.nics:
        parts += _nic_tile(nic, box.nic_rect(nic["name"]))
    parts.append("</g>")
    return parts


def _link(kind, source, target, body, tip):
    return ['<g class="link" data-kind="%s" data-from="%s" data-to="%s">' % (_esc(kind), _esc(source), _esc(target)),
            _title(tip), body, "</g>"]


def _stroke(kind):
    nvlinks = NVLINK.match(kind)
    width = min(1.2 + 0.5 * int(nvlinks.group(1)), 4.5) if nvlinks else {"PIX": 2.5, "PXB": 2, "PHB": 1.6}[kind]
    dash = ' stroke-dasharray="5 3"' if kind == "PHB" else ""
    return 'fill="none" stroke="%s" stroke-width="%s"%s' % (kind_colour(kind), _num(width), dash)


def _nic_lines(layout, gpu_rect, nic_rect):
    links = [(kind, gpu_rect(gpu["index"]), nic_rect(nic["name"]), gpu, nic) for kind, gpu, nic in layout.nic_links]
    bottoms = _ports(links, lambda link, end: link[1 + end], lambda link, end: link[1 + end][0])
    parts = []
    for position, (kind, gpu_box, nic_box, gpu, nic) in enumerate(links):
        path = '<line x1="%s" y1="%s" x2="%s" y2="%s" %s/>' % (
            _num(bottoms[(position, 0)]), _num(gpu_box[1] + gpu_box[3]), _num(bottoms[(position, 1)]), _num(nic_box[1]),
            _stroke(kind))
        parts += _link(kind, "GPU%s" % gpu["index"], nic["name"], path,
                       "GPU %s \u2013 %s: %s" % (gpu["index"], nic["name"], kind))
    return parts


def _arc_rise(x1, x2):
    return min(16 + 0.2 * abs(x2 - x1), 110)


def _gpu_arcs(layout, gpu_rect):
    links = [(kind, gpu_rect(a["index"]), gpu_rect(b["index"]), a, b) for kind, a, b in layout.gpu_links]
    tops = _ports(links, lambda link, end: link[1 + end], lambda link, end: link[1 + end][0])
    parts = []
    for position, (kind, first, _second, a, b) in enumerate(links):
        x1, x2, top = tops[(position, 0)], tops[(position, 1)], first[1]
        lift = top - _arc_rise(x1, x2)
        path = '<path d="M%s %sC%s %s %s %s %s %s" %s/>' % (
            _num(x1), _num(top), _num(x1), _num(lift), _num(x2), _num(lift), _num(x2), _num(top), _stroke(kind))
        parts += _link(kind, "GPU%s" % a["index"], "GPU%s" % b["index"], path,
                       "GPU %s \u2013 GPU %s: %s" % (a["index"], b["index"], kind))
    return parts


def _fabric(layout, gpu_rect, top):
    rects = [gpu_rect(gpu["index"]) for gpu in layout.gpus]
    left, right = min(r[0] for r in rects), max(r[0] + r[2] for r in rects)
    colour = kind_colour(layout.fabric)
    label = "NVLink fabric \u00b7 %s all-to-all \u00b7 %d GPUs" % (layout.fabric, len(rects))
    ticks = "".join('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3"/>' % (
        _num(r[0] + r[2] / 2.0), _num(top + 22), _num(r[0] + r[2] / 2.0), _num(r[1]), colour) for r in rects)
    body = _rect(left, top, right - left, 22, colour, colour, radius=11) + ticks + _text(
        (left + right) / 2.0, top + 15.5, label, size=12, fill="#ffffff", weight="700", anchor="middle")
    return ['<g class="link nvlink-fabric" data-kind="%s">' % _esc(layout.fabric),
            _title("Every GPU pair is joined by %s NVLinks (%s)" % (layout.fabric[2:], layout.fabric)), body, "</g>"]


def _memory_tags(layout, top, width):
    """CPU-less NUMA nodes as small tags, wrapped to the picture's width; (parts, bottom)."""
    parts, x, y = [], MARGIN, top
    for node in layout.memory_nodes:
        owners = ["GPU %s" % gpu["index"] for gpu in layout.gpus if gpu.get("gpu_memory_numa_node") == node.get("id")]
        label = " \u00b7 ".join(part for part in (
            "NUMA node %s" % node.get("id"), "no CPUs", _gib(node.get("memory_total_kib"), 1024 * 1024),
            "%s memory" % ", ".join(owners) if owners else None) if part)
        tag_w = len(label) * 11 * 0.58 + 20
        if x > MARGIN and x + tag_w > width - MARGIN:
            x, y = MARGIN, y + PILL_H + 8
        parts += ['<g class="numa-node memory-only" data-numa="%s">' % _esc(node.get("id")), _title(label),
                  _rect(x, y, tag_w, PILL_H, "#f5f0fb", "#8e6bb8", radius=13),
                  _text(x + 10, y + 17, label, size=11), "</g>"]
        x += tag_w + 8
    return parts, (y + PILL_H if layout.memory_nodes else top - 12)


def _legend(top, width):
    parts, x, y = ['<g class="legend">'], MARGIN, top
    for kind, meaning in KIND_MEANINGS:
        item_w = 30 + LEGEND_KIND_W + len(meaning) * 11 * 0.58 + 22
        if x > MARGIN and x + item_w > width - MARGIN:
            x, y = MARGIN, y + 20
        colour = kind_colour("NV1" if kind == "NV#" else kind)
        if kind in ("NODE", "SYS"):
            swatch = _rect(x, y - 9, 24, 12, "none", colour, radius=3, dash="3 2")
        else:
            swatch = '<line x1="%s" y1="%s" x2="%s" y2="%s" %s/>' % (
                _num(x), _num(y - 3), _num(x + 24), _num(y - 3), _stroke("NV4" if kind == "NV#" else kind))
        parts += [swatch, _text(x + 30, y + 1, kind, size=11, weight="700"),
                  _text(x + 30 + LEGEND_KIND_W, y + 1, meaning, size=11, fill=MUTED)]
        x += item_w
    parts.append("</g>")
    return parts, y + 10


def _header(layout, node_name):
    topology = layout.topology
    cpu_boxes = len([box for box in layout.boxes if box[0] != UNKNOWN])
    counts = "%d GPU%s \u00b7 %d NIC%s \u00b7 %d NUMA node%s" % (
        len(layout.gpus), "" if len(layout.gpus) == 1 else "s", len(layout.nics), "" if len(layout.nics) == 1 else "s",
        cpu_boxes + len(layout.memory_nodes), "" if cpu_boxes + len(layout.memory_nodes) == 1 else "s")
    versions = " \u00b7 ".join(part for part in (
        "driver %s" % topology["driver_version"] if topology.get("driver_version") else None,
        "CUDA %s" % topology["cuda_version"] if topology.get("cuda_version") else None) if part)
    return " \u2014 ".join(part for part in (node_name or "GPU topology", counts, versions) if part)


def _svg(width, height, label, parts):
    # Its natural width as an attribute, no style="": the page's Content-Security-Policy allows no inline
    # style attribute; the page's CSS (max-width: 100%, height: auto) shrinks it to fit.
    return ('<svg xmlns="http://www.w3.org/2000/svg" class="topology" viewBox="0 0 %s %s" width="%s" '
            'role="img" aria-label="%s" font-family="%s">%s%s</svg>' % (
                _num(width), _num(height), _num(width), _esc(label), _esc(FONT), _title(label), "".join(parts)))


def _empty(node_name):
    message = "No GPU topology was collected" + (" for %s" % node_name if node_name else "") + "."
    return _svg(440, 56, message, [_rect(1, 1, 438, 54, "#f6f8fa", "#d0d7de", radius=8),
                                   _text(220, 33, message, size=13, fill=MUTED, anchor="middle", width=420)])


def render_topology_svg(topology, node_name=""):
    """One inline ``<svg>`` element picturing a ``gpu_topology`` fact; a short notice when it is empty."""
    if not isinstance(topology, dict) or not (topology.get("gpus") or topology.get("nics") or topology.get("numa_nodes")):
        return _empty(node_name)
    layout = Layout(topology)
    with_gpus = len([box for box in layout.boxes if box[2]])
    boxes = [_Box(box_id, node, gpus, nics, layout, 4 if with_gpus > 1 else 8)
             for box_id, node, gpus, nics in layout.boxes]
    x = MARGIN
    height = max([box.content_h for box in boxes] + [0]) + FOOTER_H
    for box in boxes:
        box.x, box.height = x, height
        x += box.width + BOX_GAP
    header = _header(layout, node_name)
    width = max(x - BOX_GAP + MARGIN, 720, len(header) * 15 * 0.64 + 2 * MARGIN)

    where = dict((index, box) for box in boxes for index in box.gpu_at)
    nic_box = dict((name, box) for box in boxes for name in box.nic_at)
    band = 0
    if layout.fabric:
        band = FABRIC_H
    elif layout.gpu_links:
        # Arc ends sit anywhere along a tile's top: the widest they can be apart bounds the highest arc.
        spans = [abs(where[a["index"]].gpu_rect(a["index"])[0] - where[b["index"]].gpu_rect(b["index"])[0]) + GPU_W
                 for _kind, a, b in layout.gpu_links]
        band = 0.75 * _arc_rise(0, max(spans)) - PAD + 8
    boxes_top = MARGIN + HEADER_H + max(band, 0)
    for box in boxes:
        box.y = boxes_top

    def gpu_rect(index):
        return where[index].gpu_rect(index)

    def nic_rect(name):
        return nic_box[name].nic_rect(name)

    parts = [_text(MARGIN, MARGIN + 16, header, size=15, weight="700", width=width - 2 * MARGIN)]
    for box in boxes:
        parts += _box(box, layout)
    if layout.fabric:
        parts += _fabric(layout, gpu_rect, MARGIN + HEADER_H)
    parts += _gpu_arcs(layout, gpu_rect) + _nic_lines(layout, gpu_rect, nic_rect)
    tags, bottom = _memory_tags(layout, boxes_top + height + 14, width)
    legend, bottom = _legend(bottom + 28, width)
    return _svg(width, bottom + MARGIN, "GPU topology: " + header, parts + tags + legend)
