# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Starts and removes the bench lab: N lab nodes with emulated GPUs (scripts/lab_nodes.py).

Usage: python scripts/bench_lab.py up NODES INVENTORY
       python scripts/bench_lab.py down NODES

The nodes rotate through three kinds, so that every role of site.yml does its real
work: an 8x H100 training node (persistence mode), an 4x L40S inference node that
shares its GPUs through MPS, and an 8x A100 node with MIG layouts. Node 1 is always
the 8x H100 (the facts and MIG measurements use it).
"""

from __future__ import annotations

import sys

import lab_nodes

PREFIX = "gpuops-bench"
# The three kinds of inventory/lab.yml's nodes, with their role inputs.
NODE_KINDS = (
    {"gpuops_gpu_profile": "dgx_h100", "gpuops_lab_persistenced_unit": "upstream", "gpuops_profile": "training"},
    {"gpuops_gpu_profile": "l40s_4x", "gpuops_lab_persistenced_unit": "ubuntu", "gpuops_profile": "inference",
     "mps_state": "present", "mps_gpu_sets": {"infer-a": [0, 1], "infer-b": [2, 3]},
     "mps_active_thread_percentage": 50, "mps_pinned_mem_limit": "8G", "mps_client_users": ["gpuuser"]},
    {"gpuops_gpu_profile": "a100_8x_mig", "gpuops_lab_persistenced_unit": "debian", "gpuops_profile": "inference",
     "mig_state": "present", "mig_layouts": {
         "1": {"mig_enabled": True, "mig_devices": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}},
         "2": {"mig_enabled": True, "mig_devices": {"1g.10gb": 7}},
         "3": {"mig_enabled": True, "mig_devices": {"2g.20gb": 3}}}},
)


def node_names(nodes):
    return ["%s-%d" % (PREFIX, number) for number in range(1, nodes + 1)]


def kind_label(host_vars):
    """dgx_h100 (training), l40s_4x (MPS), a100_8x_mig (MIG)."""
    feature = "MIG" if host_vars.get("mig_state") == "present" else "MPS" if host_vars.get("mps_state") == "present" \
        else host_vars["gpuops_profile"]
    return "%s (%s)" % (host_vars["gpuops_gpu_profile"], feature)


def spec(nodes):
    """{name: host vars} of a lab of nodes, the kinds in rotation."""
    return dict((name, dict(NODE_KINDS[index % len(NODE_KINDS)])) for index, name in enumerate(node_names(nodes)))


def down(nodes):
    lab_nodes.remove(node_names(nodes))


def up(nodes, inventory):
    lab_nodes.up(spec(nodes), inventory)


def main(argv):
    if len(argv) == 4 and argv[1] == "up":
        up(int(argv[2]), argv[3])
    elif len(argv) == 3 and argv[1] == "down":
        down(int(argv[2]))
    else:
        raise SystemExit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
