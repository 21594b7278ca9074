# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One Kubernetes node as `kubectl get node NAME -o json` prints it: cordon, taints, annotations.

The fields are the Node object's of the core/v1 API (Kubernetes API reference, Node v1 core):
spec.unschedulable (what kubectl cordon sets), spec.taints (key, value, effect) and
metadata.annotations.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json


class NodeJsonError(ValueError):
    """The text is not a Node object."""


def parse_node(text):
    """{name, unschedulable, taints, annotations} of a Node object in JSON."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise NodeJsonError("not JSON: %s" % error)
    if not isinstance(data, dict) or data.get("kind", "Node") != "Node":
        raise NodeJsonError("not a Node object")
    metadata = data.get("metadata") or {}
    spec = data.get("spec") or {}
    taints = [{"key": taint.get("key"), "value": taint.get("value"), "effect": taint.get("effect")}
              for taint in spec.get("taints") or [] if isinstance(taint, dict)]
    return {"name": metadata.get("name"), "unschedulable": bool(spec.get("unschedulable")), "taints": taints,
            "annotations": dict(metadata.get("annotations") or {})}


def taint_of(node, key):
    """The node's taint with this key, or None."""
    for taint in node["taints"]:
        if taint["key"] == key:
            return taint
    return None


def describe(node, taint_key, annotation):
    """The parts of the node the gate reads, as one line: cordoned, its taint and annotation."""
    taint = taint_of(node, taint_key)
    return "cordoned=%s taint=%s annotation=%s" % (
        "yes" if node["unschedulable"] else "no",
        "%s=%s:%s" % (taint["key"], taint["value"] or "", taint["effect"]) if taint else "(none)",
        node["annotations"].get(annotation, "(none)"))
