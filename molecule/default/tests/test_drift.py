# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift made in the same run, after the validation, is repaired by that run: no call is answered from an earlier
check (docs/design.md: Feature engines)."""

from __future__ import annotations

from lab_playbook import feature_status, run_playbook

testinfra_hosts = ["gpu-train"]

SYSCTL_FILE = "/etc/sysctl.d/90-gpuops-hardening.conf"


def test_a_file_changed_between_the_validation_and_the_tuning_is_put_back(host):
    rc, output = run_playbook("molecule/default/plays/drift_after_validation.yml", "gpu-train", flags=("-v",))
    assert rc == 0, output[-4000:]
    assert feature_status(output, "sysctl_settings", "gpu-train") == "changed", output[-4000:]
    content = host.file(SYSCTL_FILE).content_string
    assert "vm.swappiness = 0" in content and "vm.swappiness = 60" not in content, content
    again, output = run_playbook("playbooks/site.yml", "gpu-train", flags=("-v",))
    assert again == 0 and feature_status(output, "sysctl_settings", "gpu-train") == "ok", output[-4000:]
