# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The readiness_gate engine: a node's scheduler hold from its readiness verdict.

converge(spec, host, check_mode) -> result, for the gpuops.hardening.readiness_gate module.

- slurm: `scontrol show node -o NAME`, then `scontrol update NodeName=NAME State=DRAIN Reason=<mark>` to hold
  (or to change the gate's own reason) and `State=RESUME` to release; the node is read back after a change.
- kubernetes: `kubectl get node NAME -o json`, then, to hold, the annotation ANNOTATION (the mark) first, the
  taint TAINT_KEY=<verdict>:NoSchedule, and `kubectl cordon`; to release, `kubectl uncordon`, the taint and the
  annotation last, so that an interrupted run still finds its own mark.

Only the gate's own hold (readiness_hold.ours) is ever changed or released; decide() says why.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import socket

from ansible_collections.gpuops.hardening.plugins.module_utils import kube_node, readiness_hold, slurm_node
from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run

NAME = "readiness_gate"
TAINT_KEY = "gpuops.io/readiness"
TAINT_EFFECT = "NoSchedule"
ANNOTATION = "gpuops.io/readiness-cordon"

ARGUMENT_SPEC = dict(
    scheduler=dict(type="str", choices=["slurm", "kubernetes"], required=True),
    node_name=dict(type="str", default=""),
    verdict=dict(type="str"),
    reasons=dict(type="list", elements="str", default=[]),
    hold_verdicts=dict(type="list", elements="str", required=True),
    kubeconfig=dict(type="path"),
    timeout=dict(type="int", default=60),
    timeout_variable=dict(type="str"),
)
SPEC_RULES = {}


def _run(feature, argv, environ=None):
    """(rc, out, err), or the feature failed naming the command when it hung."""
    try:
        return run(feature, argv, timeout=feature.params["timeout"], environ=environ)
    except CommandTimeout as error:
        feature.fail_json(msg=str(error))
    return None  # pragma: no cover


def _checked(feature, argv, result, environ=None):
    rc, out, err = _run(feature, argv, environ)
    if rc != 0:
        feature.fail_json(msg="%s failed with exit code %s: %s" % (" ".join(argv), rc, (err or out).strip()), **result)
    return out


class Slurm(object):
    """The node as slurmctld sees it, through scontrol on this host."""

    def __init__(self, feature):
        self.feature = feature
        self.scontrol = feature.get_bin_path("scontrol", required=True)
        # Slurm names a node after its short host name unless slurm.conf says otherwise (slurm.conf(5), NodeName).
        self.name = feature.params["node_name"] or socket.gethostname().split(".")[0]

    def read(self, result):
        # Slurm's standard time stamps (ISO 8601, no space): a user's SLURM_TIME_FORMAT ("relative", "%F %T") puts
        # spaces in the reason's [user@time] stamp, which then reads as part of the reason (scontrol(1), ENVIRONMENT).
        out = _checked(self.feature, [self.scontrol, "show", "node", "-o", self.name], result,
                       {"SLURM_TIME_FORMAT": "standard"})
        node = slurm_node.parse_show_node(out)
        if node is None:
            self.feature.fail_json(msg="scontrol show node -o %s printed no node line: %s" % (self.name, out.strip()), **result)
        return {"held": slurm_node.drained(node), "mark": node["reason"], "text": slurm_node.describe(node),
                "down": node["state"] == "DOWN", "node": node}

    @staticmethod
    def predicted(action, before, verdict, mark):  # pylint: disable=unused-argument
        """The node's line after the action, as Slurm shows it: DRAIN added with the reason, or removed with it."""
        node = dict(before["node"])
        flags = [flag for flag in node["flags"] if flag not in slurm_node.DRAIN_FLAGS]
        if action == readiness_hold.RELEASE:
            node.update(state="IDLE" if node["state"] == "DOWN" else node["state"], flags=flags, reason=None)
        else:
            node.update(flags=flags + ["DRAIN"], reason=mark)
        return slurm_node.describe(node)

    def commands(self, action, before, verdict, mark):  # pylint: disable=unused-argument
        update = [self.scontrol, "update", "NodeName=%s" % self.name]
        if action == readiness_hold.RELEASE:
            return [update + ["State=RESUME"]]
        return [update + ["State=DRAIN", "Reason=%s" % mark]]


class Kubernetes(object):
    """The Node object, through kubectl on this host (the play's kubectl host)."""

    def __init__(self, feature):
        self.feature = feature
        kubectl = feature.get_bin_path("kubectl", required=True)
        self.kubectl = [kubectl] + (["--kubeconfig", feature.params["kubeconfig"]] if feature.params["kubeconfig"] else [])
        if not feature.params["node_name"]:
            feature.fail_json(msg="node_name is required with scheduler kubernetes (the Node object's name)")
        self.name = feature.params["node_name"]

    def read(self, result):
        out = _checked(self.feature, self.kubectl + ["get", "node", self.name, "-o", "json"], result)
        try:
            node = kube_node.parse_node(out)
        except kube_node.NodeJsonError as error:
            self.feature.fail_json(msg="kubectl get node %s -o json: %s" % (self.name, error), **result)
        mark = node["annotations"].get(ANNOTATION)
        # Our taint alone (no annotation) is still ours to remove: its key is the gate's.
        if mark is None and kube_node.taint_of(node, TAINT_KEY) and not node["unschedulable"]:
            mark = readiness_hold.MARK_PREFIX
        held = node["unschedulable"]
        if readiness_hold.ours(mark) and kube_node.taint_of(node, TAINT_KEY) is None:
            held = False  # the gate's cordon lost its taint: holding again puts back only what is missing
        return {"held": held, "mark": mark, "text": kube_node.describe(node, TAINT_KEY, ANNOTATION),
                "down": False, "node": node}

    @staticmethod
    def predicted(action, before, verdict, mark):
        """The node's cordon, taint and annotation after the action."""
        node = dict(before["node"])
        taints = [taint for taint in node["taints"] if taint["key"] != TAINT_KEY]
        annotations = dict((key, value) for key, value in node["annotations"].items() if key != ANNOTATION)
        if action == readiness_hold.RELEASE:
            # The cordon is lifted only with the gate's taint (see commands).
            unschedulable = node["unschedulable"] and kube_node.taint_of(node, TAINT_KEY) is None
            node.update(unschedulable=unschedulable, taints=taints, annotations=annotations)
        else:
            annotations[ANNOTATION] = mark
            node.update(unschedulable=True, annotations=annotations,
                        taints=taints + [{"key": TAINT_KEY, "value": verdict, "effect": TAINT_EFFECT}])
        return kube_node.describe(node, TAINT_KEY, ANNOTATION)

    def commands(self, action, before, verdict, mark):
        """Only the steps the node still needs: kubectl refuses to remove a taint that is not there."""
        kubectl, name, node = self.kubectl, self.name, before["node"]
        taint = kube_node.taint_of(node, TAINT_KEY)
        steps = []
        if action == readiness_hold.RELEASE:
            # The gate cordons only after its taint is on, so a cordon without that taint may be an operator's
            # (a hold interrupted after its annotation, then a cordon by hand): it stays.
            if node["unschedulable"] and taint:
                steps.append(kubectl + ["uncordon", name])
            elif node["unschedulable"]:
                self.feature.warn("%s: left cordoned: without the gate's taint %s the cordon may be an operator's; "
                                  "uncordon it by hand if it was the gate's" % (name, TAINT_KEY))
            if taint:
                steps.append(kubectl + ["taint", "nodes", name, "%s-" % TAINT_KEY])
            if ANNOTATION in node["annotations"]:
                steps.append(kubectl + ["annotate", "node", name, "%s-" % ANNOTATION])
            return steps
        if node["annotations"].get(ANNOTATION) != mark:
            steps.append(kubectl + ["annotate", "--overwrite", "node", name, "%s=%s" % (ANNOTATION, mark)])
        if not taint or taint["value"] != verdict or taint["effect"] != TAINT_EFFECT:
            steps.append(kubectl + ["taint", "--overwrite", "nodes", name, "%s=%s:%s" % (TAINT_KEY, verdict, TAINT_EFFECT)])
        if not node["unschedulable"]:
            steps.append(kubectl + ["cordon", name])
        return steps


SCHEDULERS = {"slurm": Slurm, "kubernetes": Kubernetes}


def _releasable(scheduler, state):
    """Slurm resumes only a drained or down node; a Kubernetes mark left on a schedulable node is cleared."""
    return state["held"] or state["down"] or isinstance(scheduler, Kubernetes)


def converge(spec, host, check_mode):
    """Hold, update, release or keep the node's scheduler hold as its verdict says; check_mode only says it."""
    feature = host.feature(NAME, spec, check_mode)
    params = feature.params
    scheduler = SCHEDULERS[params["scheduler"]](feature)
    verdict = params["verdict"] or None
    wanted_mark = readiness_hold.hold_mark(verdict, params["reasons"]) if verdict else None
    result = {"changed": False, "scheduler": params["scheduler"], "node": scheduler.name, "verdict": verdict,
              "mark": wanted_mark}
    before = scheduler.read(result)
    action, why = readiness_hold.decide(verdict, params["hold_verdicts"], before["held"], before["mark"], wanted_mark)
    if action == readiness_hold.RELEASE and not _releasable(scheduler, before):
        action, why = readiness_hold.KEEP, "the gate's reason is on a node that is neither drained nor down: left as it is"
    if action == readiness_hold.KEEP and verdict in params["hold_verdicts"] and not readiness_hold.ours(before["mark"]):
        feature.warn("%s: the verdict %s would hold it, but %s" % (scheduler.name, verdict, why))
    argvs = [] if action == readiness_hold.KEEP else scheduler.commands(action, before, verdict, wanted_mark)
    result.update(action=action, why=why, commands=[argv[1:] for argv in argvs], before=before["text"])
    if argvs and not check_mode:
        for argv in argvs:
            _checked(feature, argv, result)
        after = scheduler.read(result)["text"]
    elif argvs:
        after = scheduler.predicted(action, before, verdict, wanted_mark)
    else:
        after = before["text"]
    result.update(changed=bool(argvs), after=after,
                  diff={"before": before["text"] + "\n", "after": after + "\n",
                        "before_header": "%s node %s" % (params["scheduler"], scheduler.name),
                        "after_header": "%s node %s" % (params["scheduler"], scheduler.name)})
    return result
