# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml's precheck on the converged training node: a no-op run answers every feature call
from one check, and a file edited by hand is put back by the same run, from which point on
every call goes to the node again."""

from __future__ import annotations

from lab_playbook import run_playbook, task_output

testinfra_hosts = ["gpu-train"]

ANSWERED = "gpuops.hardening.precheck: this call"
# The feature calls of site.yml on this node, in the order the play makes them.
FEATURE_TASKS = (
    "gpuops.hardening.sysctl : Converge kernel VM settings",
    "gpuops.hardening.sysctl : Converge swap off, live and at boot",
    "gpuops.hardening.thp : Converge transparent hugepages",
    "gpuops.hardening.memlock : Converge limits.d, systemd drop-ins and Docker's default-ulimits",
    "gpuops.hardening.persistenced : Converge nvidia-persistenced",
    "gpuops.hardening.mps : Converge the MPS group, its users and the control daemons",
    "gpuops.hardening.numa_binding : Gather GPU, NIC and NUMA topology facts",
    "gpuops.hardening.numa_binding : Install gpu-numa-exec and its helpers",
)
THP_UNIT = "/etc/systemd/system/gpuops-thp.service"


def _site(host, *flags):
    hostname = host.backend.get_hostname()
    rc, output = run_playbook("playbooks/site.yml", hostname, flags=("-v",) + flags)
    assert rc == 0, output[-3000:]
    return dict((task, task_output(output, task, hostname)) for task in FEATURE_TASKS)


def _answered(printed):
    return [task for task, text in printed.items() if text is not None and ANSWERED in text]


def test_a_no_op_run_answers_every_feature_call_from_the_precheck(host):
    printed = _site(host)
    assert _answered(printed) == list(FEATURE_TASKS), printed
    assert all(text.startswith("ok:") for text in printed.values()), printed


def test_a_check_mode_run_is_answered_too(host):
    printed = _site(host, "--check")
    assert _answered(printed) == list(FEATURE_TASKS), printed


def test_a_drifted_file_is_put_back_and_every_later_call_goes_to_the_node(host):
    unit = host.file(THP_UNIT).content_string
    assert host.run("echo '# edited by hand' >> %s" % THP_UNIT).rc == 0
    printed = _site(host)
    thp = FEATURE_TASKS.index("gpuops.hardening.thp : Converge transparent hugepages")
    # The calls before the drifted one are answered; it is made on the node and changes;
    # from then on the node has changed since the precheck, so every call goes to it.
    assert _answered(printed) == list(FEATURE_TASKS[:thp]), printed
    assert printed[FEATURE_TASKS[thp]].startswith("changed:"), printed
    assert all(printed[task].startswith("ok:") for task in FEATURE_TASKS[thp + 1:]), printed
    assert host.file(THP_UNIT).content_string == unit
    assert _answered(_site(host)) == list(FEATURE_TASKS)


def test_the_facts_the_precheck_gathers_for_site_yml_are_those_setup_gathers(host):
    """site.yml's plays gather no facts of their own: the precheck's must be setup's, fact for fact."""
    rc, output = run_playbook("molecule/default/plays/precheck_facts.yml", host.backend.get_hostname())
    assert rc == 0, output[-3000:]
