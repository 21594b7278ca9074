# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-ins for scontrol and kubectl, for the readiness gate's unit tests: one node each, its state in memory.

FakeSlurm answers `show node -o NAME` in the one-line layout of Slurm's src/api/node_info.c
(slurm_sprint_node_table: State=<base>+<flags>, Reason=<text> [<user>@<time>] near the end) and
`update NodeName= State=DRAIN Reason=` / `State=RESUME` as slurmctld does (RESUME of a node that is neither
drained nor down fails: "Invalid node state specified"). FakeKubectl keeps one Node object (core/v1) and answers
`get node -o json`, `annotate`, `taint` (removing a taint that is not there fails, as kubectl does:
'taint "<key>" not found'), `cordon` and `uncordon`. The real tools prove the same in the Slurm lab
(tests/slurm/test_readiness_gate_lab.py). Run as a script (tool name, then its arguments) with the state in the
JSON file $GATE_FAKE_STATE, they stand in on PATH for the module's own process.
"""

from __future__ import annotations

import json
import os
import sys

SLURM_LINE = ("NodeName={name} Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 CPUTot=2 CPULoad=0.01 "
              "AvailableFeatures=(null) ActiveFeatures=(null) Gres=gpu:h100:2 NodeAddr=127.0.0.1 NodeHostName={name} "
              "Version=22.05.8 OS=Linux 6.1.0 #1 SMP RealMemory=1000 AllocMem=0 FreeMem=N/A Sockets=2 Boards=1 "
              "State={state} ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=lab "
              "BootTime=2026-12-04T18:00:00 SlurmdStartTime=2026-12-04T18:01:00 LastBusyTime=2026-12-04T18:01:00 "
              "CfgTRES=cpu=2,mem=1000M,billing=2,gres/gpu=2 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 "
              "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s{reason}\n")


class FakeSlurm(object):
    def __init__(self, name="n1", state="IDLE", flags=(), reason=None):
        self.node = {"name": name, "state": state, "flags": list(flags), "reason": reason}
        self.updates = []

    def line(self):
        node = self.node
        reason = " Reason=%s [root@2026-12-04T18:02:00]" % node["reason"] if node["reason"] else ""
        return SLURM_LINE.format(name=node["name"], state="+".join([node["state"]] + node["flags"]), reason=reason)

    def __call__(self, args):
        node = self.node
        if args[:3] == ["show", "node", "-o"]:
            if args[3] != node["name"]:
                return 1, "", "Node %s not found\n" % args[3]
            return 0, self.line(), ""
        if args[0] == "update" and args[1] == "NodeName=%s" % node["name"]:
            self.updates.append(args[2:])
            fields = dict(arg.split("=", 1) for arg in args[2:])
            if fields.get("State") == "DRAIN":
                if "Reason" not in fields:
                    return 1, "", "You must specify a reason when DOWNING or DRAINING a node. Request denied\n"
                if "DRAIN" not in node["flags"]:
                    node["flags"].append("DRAIN")
                node["reason"] = fields["Reason"]
                return 0, "", ""
            if fields.get("State") == "RESUME":
                if "DRAIN" not in node["flags"] and node["state"] != "DOWN":
                    return 1, "", "slurm_update error: Invalid node state specified\n"
                node["flags"] = [flag for flag in node["flags"] if flag != "DRAIN"]
                node["state"] = "IDLE" if node["state"] == "DOWN" else node["state"]
                node["reason"] = None
                return 0, "", ""
        return 1, "", "scontrol: unexpected %r\n" % (args,)


class FakeKubectl(object):
    def __init__(self, name="n1", unschedulable=False, taints=(), annotations=None):
        self.node = {"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": name, "annotations": dict(annotations or {"node.alpha.kubernetes.io/ttl": "0"})},
                     "spec": {"podCIDR": "10.244.1.0/24"}}
        if unschedulable:
            self.node["spec"]["unschedulable"] = True
        if taints:
            self.node["spec"]["taints"] = [dict(taint) for taint in taints]
        self.changes = []
        self.kubeconfigs = []

    def __call__(self, args):
        args = list(args)
        if args[:1] == ["--kubeconfig"]:
            self.kubeconfigs.append(args[1])
            args = args[2:]
        name = self.node["metadata"]["name"]
        words = [arg for arg in args if arg != "--overwrite"]
        if words[:3] == ["get", "node", name] and words[3:] == ["-o", "json"]:
            return 0, json.dumps(self.node, indent=4) + "\n", ""
        if len(words) >= 3 and words[2] != name:
            return 1, "", 'Error from server (NotFound): nodes "%s" not found\n' % words[2]
        self.changes.append(args)
        spec, metadata = self.node["spec"], self.node["metadata"]
        if words[0] in ("cordon", "uncordon") and words[1] == name:
            if words[0] == "cordon":
                spec["unschedulable"] = True
            else:
                spec.pop("unschedulable", None)
            return 0, "node/%s %sed\n" % (name, words[0]), ""
        if words[:2] == ["annotate", "node"]:
            key, _sep, value = words[3].partition("=")
            if words[3].endswith("-"):
                metadata["annotations"].pop(words[3][:-1], None)
            else:
                metadata["annotations"][key] = value
            return 0, "node/%s annotated\n" % name, ""
        if words[:2] == ["taint", "nodes"]:
            taints = spec.setdefault("taints", [])
            if words[3].endswith("-"):
                key = words[3][:-1]
                if not any(taint["key"] == key for taint in taints):
                    return 1, "", 'error: taint "%s" not found\n' % key
                spec["taints"] = [taint for taint in taints if taint["key"] != key]
            else:
                key, rest = words[3].split("=", 1)
                value, effect = rest.split(":", 1)
                spec["taints"] = [taint for taint in taints if taint["key"] != key] + [
                    {"key": key, "value": value, "effect": effect}]
            if not spec["taints"]:
                del spec["taints"]
            return 0, "node/%s tainted\n" % name, ""
        return 1, "", "kubectl: unexpected %r\n" % (args,)


def main(argv):
    """As a script: `scheduler_fakes.py scontrol|kubectl ARGS...`, the state kept in $GATE_FAKE_STATE."""
    path = os.environ["GATE_FAKE_STATE"]
    with open(path, encoding="utf-8") as handle:
        saved = json.load(handle)
    fake = FakeSlurm() if argv[0] == "scontrol" else FakeKubectl()
    fake.node = saved[argv[0]]
    rc, out, err = fake(argv[1:])
    saved[argv[0]] = fake.node
    saved.setdefault("calls", []).append(argv)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(saved, handle)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
