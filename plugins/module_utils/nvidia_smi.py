# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure parsers for nvidia-smi output: text in, plain data out.

They never run anything, so they are tested on captures from many drivers.
Each one tolerates what copies of the output suffer: CRLF line ends, tabs
turned into spaces (or condensed), blank lines and stray text around the
table, a missing legend, N/A cells and output cut short.

Public contract (other code and a conformance suite call these as written):
``parse_topology_matrix``, ``parse_gpu_list``, ``parse_gpu_instance_profiles``,
``parse_gpu_instance_placements`` (``mig -lgipp``), ``parse_gpu_instances`` (``mig -lgi``),
``parse_compute_instances`` (``mig -lci``), ``parse_compute_instance_profiles``
(``mig -lcip``), ``parse_query_csv`` (``--query-gpu=...`` or ``--query-compute-apps=...`` with
``--format=csv``: one dict per row, keyed by the header's field names without their `` [unit]``),
``cell_text`` and ``cell_int`` (one of those cells as text or as a number) and
``parse_mig_command_output`` (``mig -cgi``, ``-cci`` and ``-cgi ... -C``: the GPU
and compute instances created and the error lines printed).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import re
from xml.etree import ElementTree

# Relative imports: they work inside Ansible and where a script loads these files by path
# as a package of their own (see mig_converge).
from .cpulist import try_parse_cpulist
from .pci_bus_id import sysfs_bus_id

# --------------------------------------------------------------------------
# nvidia-smi topo -m
# --------------------------------------------------------------------------

# Row and column labels: GPU0, NIC3, and on old drivers device names such as
# mlx5_0 or mlx4_0. A link value like NV18 also ends in a digit, so it is excluded.
_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9_]*\d$")
_LINK_LOOKALIKE = re.compile(r"^NV\d+$")
_GPU_LABEL = re.compile(r"^GPU\d+$")
_NIC_LABEL = re.compile(r"^NIC\d+$")
# Link cells: X (self), NV#, SYS, NODE, PHB, PXB, PIX, SOC (old SYS), and the
# p2p matrix's OK/CNS/GNS/TNS/NS/U.
_LINK_VALUE = re.compile(r"^(?:X|NV\d+|[A-Z]{1,6})$")
_NIC_LEGEND = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")
# The multi-word columns after the links, in the order nvidia-smi prints them.
_EXTRA_COLUMNS = (
    ("cpu_affinity", re.compile(r"CPU\s+Affinity", re.IGNORECASE)),
    ("numa_affinity", re.compile(r"NUMA\s+Affinity", re.IGNORECASE)),
    ("gpu_numa_id", re.compile(r"GPU\s+NUMA\s+ID", re.IGNORECASE)),
)
_EXTRA_KEYS = tuple(key for key, _pattern in _EXTRA_COLUMNS)


def _is_label(token):
    return bool(_LABEL.match(token)) and not _LINK_LOOKALIKE.match(token)


# Terminal escapes: nvidia-smi underlines the topo -m header even into a pipe.
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _lines(text):
    """Lines without their ends or terminal escapes; CRLF, CR and LF all count."""
    return _ANSI_ESCAPE.sub("", text or "").splitlines()


def _header_tokens(line):
    """Split a header line, keeping multi-word column names whole."""
    for key, pattern in _EXTRA_COLUMNS:
        line = pattern.sub(" @%s " % key, line)
    return [token[1:] if token.startswith("@") else token for token in line.split()]


def _looks_like_header(tokens):
    if not tokens or not any(_GPU_LABEL.match(token) for token in tokens):
        return False
    return all(token in _EXTRA_KEYS or _is_label(token) for token in tokens)


def _split_values(values, link_count, extra_count):
    """Split a row's cells into link cells and the affinity cells after them."""
    if len(values) <= link_count or len(values) == link_count + extra_count:
        return values[:link_count], values[link_count:]
    # The row is short (NIC rows lack the affinity columns) or damaged: links
    # are the leading cells that look like links.
    index = 0
    while index < len(values) and index < link_count and _LINK_VALUE.match(values[index]):
        index += 1
    return values[:index], values[index:]


def _whitespace_table(lines):
    """Rows of a plain (tab or space separated) matrix: (columns, extras, rows)."""
    header_at = None
    for number, line in enumerate(lines):
        if _looks_like_header(_header_tokens(line)):
            header_at = number
            break
    rows = []
    if header_at is None:
        columns, extras, start = None, list(_EXTRA_KEYS), 0
    else:
        tokens = _header_tokens(lines[header_at])
        columns = [token for token in tokens if token not in _EXTRA_KEYS]
        extras = [token for token in tokens if token in _EXTRA_KEYS]
        start = header_at + 1
    for line in lines[start:]:
        tokens = line.split()
        if not tokens:
            if rows:
                break
            continue
        if not _is_label(tokens[0]) or _looks_like_header(_header_tokens(line)):
            if rows:
                break
            continue
        rows.append((tokens[0], tokens[1:]))
    if columns is None:
        # Header lost (output cut at the top): nvidia-smi prints columns in row order.
        columns = [label for label, _values in rows]
    parsed = []
    for label, values in rows:
        links, rest = _split_values(values, len(columns), len(extras))
        cells = dict(zip(columns, links))
        cells.update(zip(extras, rest))
        parsed.append((label, cells))
    return columns, parsed


def _pipe_cells(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _pipe_table(lines):
    """Rows of a markdown-style table (``| GPU0 | ... |``), columns in any order."""
    header = None
    parsed = []
    for line in lines:
        if not line.strip().startswith("|"):
            if parsed:
                break
            continue
        cells = _pipe_cells(line)
        if header is None:
            if any(_GPU_LABEL.match(cell) for cell in cells):
                header = [_header_tokens(cell)[0] if cell.strip() else "" for cell in cells]
            continue
        if all(re.match(r"^:?-+:?$", cell) for cell in cells if cell):
            continue
        label = None
        row = {}
        for name, cell in zip(header, cells):
            if name == "":
                label = cell
            elif cell:
                row[name] = cell
        if label and _is_label(label):
            parsed.append((label, row))
    if header is None:
        return None, []
    columns = [name for name in header if name and name not in _EXTRA_KEYS]
    return columns, parsed


def _node_list(value):
    if value is None or value.strip().upper() in ("N/A", ""):
        return None
    return try_parse_cpulist(value)


def _int_or_none(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def parse_topology_matrix(text):
    """Parse ``nvidia-smi topo -m`` (or ``topo --matrix``).

    Returns ``{"labels", "gpus", "nics", "links"}``; see the module's
    documentation for the shape. Missing or N/A cells become None; ranges
    such as ``0-15,32-47`` and ``6-7`` become lists.
    """
    lines = _lines(text)
    columns, rows = None, []
    if any(line.strip().startswith("|") for line in lines):
        columns, rows = _pipe_table(lines)
    if not rows:
        columns, rows = _whitespace_table(lines)

    labels = list(columns)
    for label, _cells in rows:
        if label not in labels:
            labels.append(label)

    links = {}
    for label, cells in rows:
        for other in labels:
            value = cells.get(other)
            if other == label or value is None or value.upper() == "X":
                continue
            links.setdefault(label, {})[other] = value
    # The matrix is symmetric; fill a cell only the other direction printed
    # (a damaged copy can lose the NIC columns but keep the NIC rows).
    for label in list(links):
        for other, value in list(links[label].items()):
            links.setdefault(other, {}).setdefault(label, value)

    legend = {}
    for line in lines:
        match = _NIC_LEGEND.match(line)
        if match:
            legend[match.group(1)] = match.group(2)

    cells_by_label = dict(rows)
    gpus = {}
    nics = {}
    for label in labels:
        if _GPU_LABEL.match(label):
            cells = cells_by_label.get(label, {})
            gpus[label] = {
                "cpu_affinity": _node_list(cells.get("cpu_affinity")),
                "numa_affinity": _node_list(cells.get("numa_affinity")),
                "gpu_numa_id": _int_or_none(cells.get("gpu_numa_id")),
            }
        elif _NIC_LABEL.match(label):
            nics[label] = legend.get(label)
        else:
            nics[label] = label
    return {"labels": labels, "gpus": gpus, "nics": nics, "links": links}


# --------------------------------------------------------------------------
# nvidia-smi -L
# --------------------------------------------------------------------------

_UUID_PART = r"(?:\(\s*UUID\s*:\s*([^)\s]+)\s*\))?"
_GPU_LINE = re.compile(r"^\s*GPU\s+(\d+)\s*:\s*(.*?)\s*" + _UUID_PART + r"\s*$")
_MIG_LINE = re.compile(r"^\s*MIG\s+(\S+)\s+Device\s+(\d+)\s*:\s*" + _UUID_PART)


def parse_gpu_list(text):
    """Parse ``nvidia-smi -L``: GPUs with their MIG devices.

    Both MIG UUID forms are kept as printed: ``MIG-<uuid>`` (R470 and later)
    and ``MIG-GPU-<uuid>/<gi>/<ci>`` (older drivers). Lines that are not GPU or
    MIG lines are ignored, so a grep of bare UUIDs yields no GPUs.
    """
    gpus = []
    for line in _lines(text):
        match = _GPU_LINE.match(line)
        if match:
            gpus.append({
                "index": int(match.group(1)),
                "name": " ".join(match.group(2).split()),
                "uuid": match.group(3),
                "mig_devices": [],
            })
            continue
        match = _MIG_LINE.match(line)
        if match and gpus:
            gpus[-1]["mig_devices"].append({
                "index": int(match.group(2)),
                "profile": match.group(1),
                "uuid": match.group(3),
            })
    return gpus


# --------------------------------------------------------------------------
# nvidia-smi mig -lgip
# --------------------------------------------------------------------------

_LGIP_ROW = re.compile(
    r"^(\d+)\s+(?:MIG\s+)?(\S+)\s+(\d+)\s+(\d+)\s*/\s*(\d+)\s+(\d+(?:\.\d+)?|N/A|-)\s*(.*)$")
# A compact form some tools print: "0  MIG 1g.24gb  Profile ID: 14, Instances: 4/4  Mem: 24.00 GiB".
_LGIP_KEYED_ROW = re.compile(
    r"^(\d+)\s+(?:MIG\s+)?(\S+)\s+.*?\bID:\s*(\d+),?\s+Instances:\s*(\d+)\s*/\s*(\d+)"
    r"(?:\s+Mem:\s*(\d+(?:\.\d+)?))?")
_DEFAULT_ROW_COLUMNS = ["p2p", "sm", "dec", "enc"]
_DEFAULT_MORE_COLUMNS = ["ce", "jpeg", "ofa"]
# First-line columns already read by the row pattern, and second-line words
# that only qualify a first-line column.
_ROW_FIXED = ("gpu", "name", "id", "instances", "memory", "profile")
_SUBHEADINGS = ("free_total", "gib", "mig", "id", "")


def _column_key(word):
    return re.sub(r"[^a-z0-9]+", "_", word.lower()).strip("_")


def _cell_value(key, value):
    if key == "p2p":
        return {"yes": True, "no": False}.get(value.lower())
    number = _int_or_none(value)
    return value if number is None else number


def parse_gpu_instance_profiles(text):
    """Parse ``nvidia-smi mig -lgip``: one item per GPU and profile.

    Items hold ``gpu``, ``name`` (without the ``MIG`` prefix, suffixes such as
    ``+me``, ``+gfx``, ``-me`` and ``+me.all`` kept), ``id``, ``free``,
    ``total`` and ``memory_gib``, plus the table's other columns under their
    lower-cased headings (``p2p`` as a bool, ``sm``, ``dec``, ``enc``, ``ce``,
    ``jpeg``, ``ofa``). The older table and the newer, wider one both parse,
    with or without a second line per profile.
    """
    row_columns = list(_DEFAULT_ROW_COLUMNS)
    more_columns = list(_DEFAULT_MORE_COLUMNS)
    profiles = []
    last_was_row = False
    for raw in _lines(text):
        line = raw.strip().strip("|").strip()
        words = line.split()
        if "Name" in words and "Instances" in words:
            keys = [_column_key(word) for word in words]
            row_columns = [key for key in keys if key not in _ROW_FIXED] or row_columns
            last_was_row = False
            continue
        if "Free/Total" in words:
            keys = [_column_key(word) for word in words]
            more_columns = [key for key in keys if key not in _SUBHEADINGS] or more_columns
            last_was_row = False
            continue
        match = _LGIP_ROW.match(line)
        if match and not re.match(r"^\d+$", match.group(2)):
            memory = match.group(6)
            item = {
                "gpu": int(match.group(1)),
                "name": match.group(2),
                "id": int(match.group(3)),
                "free": int(match.group(4)),
                "total": int(match.group(5)),
                "memory_gib": float(memory) if memory[0].isdigit() else None,
            }
            for key, value in zip(row_columns, match.group(7).split()):
                item[key] = _cell_value(key, value)
            profiles.append(item)
            last_was_row = True
            continue
        match = _LGIP_KEYED_ROW.match(line)
        if match:
            profiles.append({
                "gpu": int(match.group(1)),
                "name": match.group(2),
                "id": int(match.group(3)),
                "free": int(match.group(4)),
                "total": int(match.group(5)),
                "memory_gib": float(match.group(6)) if match.group(6) else None,
            })
            last_was_row = False
            continue
        if last_was_row and words and all(re.match(r"^\d+$", word) for word in words):
            # The second line of a profile: CE, JPEG, OFA under SM, DEC, ENC.
            for key, value in zip(more_columns[-len(words):], words):
                profiles[-1][key] = int(value)
        last_was_row = False
    return profiles


# --------------------------------------------------------------------------
# nvidia-smi --query-gpu=... / --query-compute-apps=... --format=csv
# --------------------------------------------------------------------------

# Cells nvidia-smi prints where a GPU has no value for a field.
_UNAVAILABLE = ("N/A", "[N/A]", "Not Supported", "[Not Supported]")
# How nvidia-smi's csv prints a missing value; cell_text gives it back as text.
NOT_AVAILABLE = "[N/A]"
# Free text nvidia-smi prints unquoted, commas included (a process path such as
# /opt/run,v2/python): as the last field, a row's surplus cells belong to it.
_FREE_TEXT_FIELDS = ("process_name",)
_DIGITS = re.compile(r"^[0-9]+$")
# A header cell: a lower-case field name, optionally followed by its unit.
_CSV_FIELD = re.compile(r"^([a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+)*)(?:\s*\[[^\]]*\])?$")
# What nvidia-smi prints around a table on stdout: warnings before it (an
# infoROM warning, a pending MIG mode), messages instead of it.
_CSV_NOTICE = re.compile(
    r"^(?:(?:warning|error|note)\s*:|(?:failed|unable) to\b|no devices were found"
    r"|nvidia-smi has failed|invalid combination|field \".*\" is not a valid field"
    r"|format modifier is not recognized|reboot the system|all done\.?$|no running processes found)",
    re.IGNORECASE)


def _csv_cells(line):
    """A line's cells; csv undoes nvidia-smi's ", " separator and any quoting."""
    try:
        return [cell.strip() for cell in next(csv.reader([line], skipinitialspace=True), [])]
    except csv.Error:
        # A NUL byte from a damaged copy: the line is not a row.
        return []


def _csv_header(cells):
    """Field names of a header line, or None when the cells are not one."""
    names = []
    for cell in cells:
        match = _CSV_FIELD.match(cell)
        if not match:
            return None
        names.append(match.group(1))
    return names or None


def parse_query_csv(text):
    """Parse ``nvidia-smi --query-gpu=...`` or ``--query-compute-apps=...`` with
    ``--format=csv`` (the header line included).

    Returns one dict per GPU (or process) row, keyed by the header's field names with any
    `` [unit]`` removed (``memory.total [MiB]`` -> ``memory.total``). Values are
    stripped strings as printed, units included (``40960 MiB``); ``N/A``,
    ``[N/A]``, ``Not Supported`` and ``[Not Supported]`` become None. Warnings,
    messages, blank lines and lines whose cell count differs from the header's
    are not rows, except that a last ``process_name`` field keeps the commas of
    the name. Output without a header (``--format=csv,noheader``) names no
    fields, so it yields no rows: ask for the header to use this parser.
    """
    header = None
    rows = []
    for line in _lines(text):
        line = line.lstrip("\ufeff").strip()
        if not line or _CSV_NOTICE.match(line):
            continue
        cells = _csv_cells(line)
        names = _csv_header(cells)
        if header is None or (names and (names == header or len(names) != len(header))):
            # The first header, a repeated one, or the header of a second table.
            header = names or header
            continue
        if len(cells) > len(header) and header[-1] in _FREE_TEXT_FIELDS:
            cells = [cell.strip() for cell in line.split(",", len(header) - 1)]
        if len(cells) != len(header):
            continue
        rows.append(dict((name, None if value in _UNAVAILABLE else value)
                         for name, value in zip(header, cells)))
    return rows


def cell_text(row, field):
    """A parse_query_csv cell as text: a missing or unavailable one reads ``[N/A]``."""
    value = row.get(field)
    return NOT_AVAILABLE if value is None else value


def cell_int(row, field):
    """A parse_query_csv cell of digits (an index, a pid) as an int, else None."""
    value = row.get(field)
    return int(value) if value is not None and _DIGITS.match(value) else None


# --------------------------------------------------------------------------
# nvidia-smi mig -cgi / -cci / -cgi ... -C
# --------------------------------------------------------------------------

# "using profile MIG 3g.20gb (ID  9)": the name may carry a suffix (+me, -me,
# +gfx) or a compute-instance prefix (1c.3g.20gb).
_MIG_PROFILE = r"using\s+profile\s+(?:MIG\s+)?(\S+)\s*\(\s*ID\s*(\d+)\s*\)"
_CREATED_GI = re.compile(
    r"^Successfully\s+created\s+GPU\s+instance\s+ID\s+(\d+)\s+on\s+GPU\s+(\d+)\s+" + _MIG_PROFILE, re.IGNORECASE)
_CREATED_CI = re.compile(
    r"^Successfully\s+created\s+compute\s+instance\s+ID\s+(\d+)\s+on\s+GPU\s+(\d+)\s+"
    r"GPU\s+instance\s+ID\s+(\d+)\s+" + _MIG_PROFILE, re.IGNORECASE)
# The failures nvidia-smi prints for these commands: one "Unable to ..." line
# per instance and a "Failed to ..." summary, the NVML and driver failures, the
# "No ... found" refusals and the usage errors.
_MIG_ERROR = re.compile(
    r"^(?:(?:Unable|Failed)\s+to\s|No\s+(?:MIG-enabled|MIG-supported)\s+devices\s+found"
    r"|No\s+(?:GPU|compute)\s+instances\s+found|No\s+devices\s+were\s+found"
    r"|NVIDIA-SMI\s+has\s+failed|Invalid\s+combination\s+of\s+input\s+arguments|ERROR\s*:)",
    re.IGNORECASE)


def parse_mig_command_output(text):
    """Parse what ``nvidia-smi mig -cgi``, ``-cci`` or ``-cgi ... -C`` printed.

    Returns ``{"gpu_instances", "compute_instances", "errors"}``: GPU instances
    as ``{"gpu", "id", "profile", "profile_id"}``, compute instances as
    ``{"gpu", "gpu_instance", "id", "profile", "profile_id"}`` (profile names
    without the ``MIG`` prefix, numbers as ints), and the error lines exactly
    as printed, stripped. Other lines (warnings, destroy reports) are ignored.
    """
    result = {"gpu_instances": [], "compute_instances": [], "errors": []}
    for line in _lines(text):
        line = line.strip()
        match = _CREATED_GI.match(line)
        if match:
            result["gpu_instances"].append({
                "gpu": int(match.group(2)),
                "id": int(match.group(1)),
                "profile": match.group(3),
                "profile_id": int(match.group(4)),
            })
            continue
        match = _CREATED_CI.match(line)
        if match:
            result["compute_instances"].append({
                "gpu": int(match.group(2)),
                "gpu_instance": int(match.group(3)),
                "id": int(match.group(1)),
                "profile": match.group(4),
                "profile_id": int(match.group(5)),
            })
            continue
        if _MIG_ERROR.match(line):
            result["errors"].append(line)
    return result


# --------------------------------------------------------------------------
# nvidia-smi -q -x
# --------------------------------------------------------------------------

# "GPU  0 Profile ID 15 Placements: {0,2,4,6}:2" and "... Placement : {0}:8".
_LGIPP_ROW = re.compile(r"^GPU\s+(\d+)\s+Profile\s+ID\s+(\d+)\s+Placements?\s*:\s*\{([\d,\s]*)\}\s*:\s*(\d+)\s*$")


def parse_gpu_instance_placements(text):
    """Parse ``nvidia-smi mig -lgipp``: one item per GPU and profile, with ``gpu``,
    ``profile_id``, ``starts`` (the memory slices an instance may start at) and
    ``size`` (how many slices it takes). Other lines are ignored."""
    placements = []
    for raw in _lines(text):
        match = _LGIPP_ROW.match(raw.strip())
        if match:
            placements.append({
                "gpu": int(match.group(1)),
                "profile_id": int(match.group(2)),
                "starts": [int(start) for start in re.findall(r"\d+", match.group(3))],
                "size": int(match.group(4)),
            })
    return placements


# "|   0  MIG 3g.40gb          9        2          4:4     |" (one row per GPU instance).
_LGI_ROW = re.compile(r"^(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s*:\s*(\d+)$")


def parse_gpu_instances(text):
    """Parse ``nvidia-smi mig -lgi``: one item per GPU instance, with ``gpu``, ``profile``
    (without the ``MIG`` prefix), ``profile_id``, ``id``, ``start`` and ``size``. Other lines,
    such as ``No GPU instances found``, are ignored."""
    instances = []
    for raw in _lines(text):
        match = _LGI_ROW.match(raw.strip().strip("|").strip())
        if match:
            instances.append({
                "gpu": int(match.group(1)), "profile": match.group(2), "profile_id": int(match.group(3)),
                "id": int(match.group(4)), "start": int(match.group(5)), "size": int(match.group(6)),
            })
    return instances


# "|   0      1       MIG 1c.3g.40gb       0         2          2:1     |" (mig -lci).
_LCI_ROW = re.compile(r"^(\d+)\s+(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s*:\s*(\d+)$")
# "|   0      1       MIG 3g.40gb          2*     0/1           42 ..." (mig -lcip; * marks the default).
_LCIP_ROW = re.compile(r"^(\d+)\s+(\d+)\s+MIG\s+(\S+)\s+(\d+)(\*?)\s+(\d+)\s*/\s*(\d+)(?:\s|$)")


def parse_compute_instances(text):
    """Parse ``nvidia-smi mig -lci``: one item per compute instance, with ``gpu``,
    ``gpu_instance``, ``profile`` (without the ``MIG`` prefix), ``profile_id``, ``id``,
    ``start`` and ``size`` (its compute slices). Other lines, such as ``No compute
    instances found``, are ignored."""
    instances = []
    for raw in _lines(text):
        match = _LCI_ROW.match(raw.strip().strip("|").strip())
        if match:
            instances.append({
                "gpu": int(match.group(1)), "gpu_instance": int(match.group(2)), "profile": match.group(3),
                "profile_id": int(match.group(4)), "id": int(match.group(5)), "start": int(match.group(6)),
                "size": int(match.group(7)),
            })
    return instances


def parse_compute_instance_profiles(text):
    """Parse ``nvidia-smi mig -lcip``: one item per GPU instance and compute-instance
    profile it offers, with ``gpu``, ``gpu_instance``, ``profile`` (without ``MIG``),
    ``profile_id``, ``default`` (the ``*`` mark), ``free`` and ``total``."""
    profiles = []
    for raw in _lines(text):
        match = _LCIP_ROW.match(raw.strip().strip("|").strip())
        if match:
            profiles.append({
                "gpu": int(match.group(1)), "gpu_instance": int(match.group(2)), "profile": match.group(3),
                "profile_id": int(match.group(4)), "default": match.group(5) == "*",
                "free": int(match.group(6)), "total": int(match.group(7)),
            })
    return profiles


def pci_bus_id_to_sysfs(bus_id):
    """``00000000:18:00.0`` (nvidia-smi) to ``0000:18:00.0`` (sysfs); None if malformed.

    Kept for callers of this module; the conversion itself is sysfs_bus_id().
    """
    return sysfs_bus_id(bus_id)


def element_text(element, path):
    """The stripped text at path below element; None when absent, empty or unavailable (N/A, Not Supported)."""
    if element is None:
        return None
    found = element.find(path)
    if found is None or found.text is None:
        return None
    value = found.text.strip()
    return None if value == "" or value in _UNAVAILABLE else value


def _mib(value):
    match = re.match(r"^(\d+)\s*MiB$", value or "")
    return int(match.group(1)) if match else None


def query_root(text):
    """The root element of ``nvidia-smi -q -x`` output; ValueError when no ``nvidia_smi_log`` document can be read."""
    text = text or ""
    start = text.find("<nvidia_smi_log")
    end = text.rfind("</nvidia_smi_log>")
    if start < 0 or end < 0:
        raise ValueError("no nvidia_smi_log document in the output")
    try:
        return ElementTree.fromstring(text[start:end + len("</nvidia_smi_log>")])
    except ElementTree.ParseError as error:
        raise ValueError("unreadable nvidia-smi XML: %s" % error)


def parse_query_xml(text):
    """Parse ``nvidia-smi -q -x`` into driver/CUDA versions and one dict per GPU.

    GPUs keep nvidia-smi's order, which is its index order; each lists its MIG devices
    and its processes (with the GPU and compute instance they run in). Raises ValueError
    when no ``nvidia_smi_log`` document can be read.
    """
    return parse_query_root(query_root(text))


def parse_query_root(root):
    """parse_query_xml() of a document query_root() read, so that other readers of the same output parse it once."""
    gpus = []
    for index, gpu in enumerate(root.findall("gpu")):
        bus_id = element_text(gpu, "pci/pci_bus_id") or (gpu.get("id") or "").strip() or None
        mig_devices = []
        for device in gpu.findall("mig_devices/mig_device"):
            mig_devices.append({
                "index": _int_or_none(element_text(device, "index")),
                "gpu_instance_id": _int_or_none(element_text(device, "gpu_instance_id")),
                "compute_instance_id": _int_or_none(element_text(device, "compute_instance_id")),
                "memory_total_mib": _mib(element_text(device, "fb_memory_usage/total")),
            })
        processes = []
        for process in gpu.findall("processes/process_info"):
            processes.append({
                "pid": _int_or_none(element_text(process, "pid")),
                "name": element_text(process, "process_name"),
                "type": element_text(process, "type"),
                "gpu_instance_id": _int_or_none(element_text(process, "gpu_instance_id")),
                "compute_instance_id": _int_or_none(element_text(process, "compute_instance_id")),
                "used_memory_mib": _mib(element_text(process, "used_memory")),
            })
        gpus.append({
            "index": index,
            "name": element_text(gpu, "product_name"),
            "uuid": element_text(gpu, "uuid"),
            "pci_bus_id": bus_id,
            "minor_number": _int_or_none(element_text(gpu, "minor_number")),
            "memory_total_mib": _mib(element_text(gpu, "fb_memory_usage/total")),
            "persistence_mode": element_text(gpu, "persistence_mode"),
            "mig_mode": element_text(gpu, "mig_mode/current_mig"),
            "mig_mode_pending": element_text(gpu, "mig_mode/pending_mig"),
            "compute_mode": element_text(gpu, "compute_mode"),
            "mig_devices": mig_devices,
            "processes": processes,
        })
    return {
        "driver_version": element_text(root, "driver_version"),
        "cuda_version": element_text(root, "cuda_version"),
        "gpus": gpus,
    }
