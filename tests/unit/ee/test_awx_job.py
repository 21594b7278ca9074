# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ee gate's AWX-shaped private data directory: the extra vars, the inventory script, the settings."""

from __future__ import annotations

import json
import subprocess
import sys

import yaml

from ansible_collections.gpuops.hardening.tests.ee import awx_job


class TagLoader(yaml.SafeLoader):
    """Reads `!unsafe` scalars as ("unsafe", value), to see which ones AWX's writer marked."""


TagLoader.add_constructor("!unsafe", lambda loader, node: ("unsafe", loader.construct_scalar(node)))


def test_the_templates_own_extra_vars_stay_plain_and_the_answers_are_unsafe():
    text = awx_job.extravars_text({"gpuops_profile": "training", "thp_defrag": "defer+madvise", "persistenced_timeout": 120,
                                   "sysctl_disable_swap": "true"}, {"gpuops_profile": "training"})
    loaded = yaml.load(text, Loader=TagLoader)
    assert loaded == {"gpuops_profile": "training", ("unsafe", "thp_defrag"): ("unsafe", "defer+madvise"),
                      ("unsafe", "persistenced_timeout"): 120, ("unsafe", "sysctl_disable_swap"): ("unsafe", "true")}


def test_a_template_var_an_answer_changed_is_unsafe_too():
    loaded = yaml.load(awx_job.extravars_text({"gpuops_profile": "inference"}, {"gpuops_profile": "training"}),
                       Loader=TagLoader)
    assert loaded == {("unsafe", "gpuops_profile"): ("unsafe", "inference")}


def test_the_job_variables_come_under_both_prefixes():
    names = awx_job.job_variables(7, "gpuops audit", "GPU nodes")
    assert names["awx_job_id"] == names["tower_job_id"] == 7
    assert names["awx_job_template_name"] == "gpuops audit"


def test_the_inventory_script_prints_the_inventory_with_awxs_host_variables(tmp_path):
    inventory = {"all": {"children": ["gpu_nodes"], "vars": {"ansible_connection": "community.docker.docker"}},
                 "gpu_nodes": {"hosts": ["gpu-train"], "vars": {"gpuops_profile": "training"}},
                 "_meta": {"hostvars": {"gpu-train": {"ansible_host": "gpu-awx-train"}}}}
    script = tmp_path / "hosts"
    script.write_text(awx_job.inventory_script(inventory), encoding="utf-8")
    printed = json.loads(subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                                        check=True).stdout)
    assert printed["gpu_nodes"] == inventory["gpu_nodes"]
    assert printed["_meta"]["hostvars"]["gpu-train"] == {
        "ansible_host": "gpu-awx-train", "remote_host_enabled": "true", "remote_host_id": 1,
        "remote_tower_enabled": "true", "remote_tower_id": 1}


def test_the_settings_isolate_the_job_in_the_image_as_awx_asks():
    settings = awx_job.runner_settings("gpuops-hardening-ee:2.0.0", "missing")
    assert settings["process_isolation"] is True and settings["container_image"] == "gpuops-hardening-ee:2.0.0"
    assert settings["container_options"][:2] == ["--user=root", "--pull=missing"]
    assert settings["suppress_output_file"] is True and settings["suppress_ansible_output"] is True
