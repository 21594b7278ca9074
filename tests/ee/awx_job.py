# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A job template's job, laid out and started the way AWX 24.6.1 starts one through ansible-runner.

The layout follows AWX 24.6.1's awx/main/tasks/jobs.py (BaseTask.run, RunJob), the
version the awx.awx collection of PyPI's `ansible` 12.3.0 targets:

- project/: the project's checkout (`build_project_dir`, a copy of the SCM
  checkout); the playbook path is the template's, relative to it;
- inventory/hosts: an executable script that prints the inventory as JSON, with
  remote_host_*/remote_tower_* host variables (`build_inventory`,
  awx/main/models/inventory.py `get_script_data(hostvars=True, towervars=True)`);
- env/extravars: the template's extra_vars, the survey answers over them and the
  awx_*/tower_* job variables, as YAML where each variable that is not one of the
  template's own extra_vars, value and all, is dumped `!unsafe`
  (`build_extra_vars_file`, awx/main/utils/safe_yaml.py `safe_dump`,
  ALLOW_JINJA_IN_EXTRA_VARS = 'template');
- env/cmdline: `-u root --become -l LIMIT` (`RunJob.build_args`: the machine
  credential's user, root without one; become_enabled; the job's limit);
- env/settings: AWX's own runner settings (job_timeout, suppress_ansible_output,
  suppress_output_file) and the execution environment's parameters AWX hands
  ansible-runner (`build_execution_environment_params`: process isolation,
  the image, container_options `--user=root` and `--pull=<the EE's pull>`);
- env/envvars: `build_env`'s variables. AWX passes them (and the isolation
  parameters) to ansible-runner as arguments, not files
  (AWX_RUNNER_OMIT_ENV_FILES); `ansible-runner run` reads the same keys from
  these files (ansible_runner/config/_base.py, `prepare_env`).

Where the lab differs from an AWX install: the container engine is docker, not
podman (ansible-runner then adds `--user=<uid>` itself); AWX's podman network
option (DEFAULT_CONTAINER_RUN_OPTIONS) becomes `--network=none`, as the lab has no
network; and the host's Docker socket is mounted, as an AWX_ISOLATION_SHOW_PATHS
entry would be (a container_volume_mounts item), for community.docker's
connection to the lab node.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import yaml

AWX_VERSION = "24.6.1"
DOCKER_SOCKET = "/var/run/docker.sock"
# AWX settings (awx/settings/defaults.py) that build_env copies into every job's environment.
AWX_ANSIBLE_SETTINGS = {"ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_PARAMIKO_RECORD_HOST_KEYS": "False",
                        "ANSIBLE_FORCE_COLOR": "True", "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True"}
JOB_VARIABLE_PREFIXES = ("awx", "tower")
JOB_TIMEOUT_S = 900


class _UnsafeDumper(yaml.SafeDumper):
    """Every string, keys included, as `!unsafe`: Ansible never templates it."""

    def represent_str(self, data):
        return self.represent_scalar("!unsafe", data)


_UnsafeDumper.add_representer(str, _UnsafeDumper.represent_str)


def extravars_text(extra_vars, trusted):
    """EXTRA_VARS as AWX writes env/extravars: a variable equal to TRUSTED's (the template's) plain, any other unsafe."""
    parts = []
    for name, value in extra_vars.items():
        dumper = yaml.SafeDumper if name in trusted and trusted[name] == value else _UnsafeDumper
        parts.append(yaml.dump({name: value}, Dumper=dumper, default_flow_style=False))
    return "".join(parts)


def job_variables(job_id, template_name, inventory_name):
    """The awx_*/tower_* variables AWX adds to a job's extra vars (awx_meta_vars), for a job a user launched."""
    values = {"job_id": job_id, "job_launch_type": "manual", "job_template_id": 1,
              "job_template_name": template_name, "inventory_id": 1, "inventory_name": inventory_name,
              "user_id": 1, "user_name": "admin"}
    return dict(("%s_%s" % (prefix, key), value) for prefix in JOB_VARIABLE_PREFIXES for key, value in values.items())


def inventory_script(inventory):
    """inventory/hosts: INVENTORY (ansible-inventory --list --export's shape) with AWX's host variables."""
    data = json.loads(json.dumps(inventory))
    hostvars = data.setdefault("_meta", {}).setdefault("hostvars", {})
    for number, host in enumerate(sorted(_hosts(data)), start=1):
        for prefix in ("host", "tower"):
            hostvars.setdefault(host, {}).update({"remote_%s_enabled" % prefix: "true", "remote_%s_id" % prefix: number})
    return "#! /usr/bin/env python3\n# -*- coding: utf-8 -*-\nprint(%r)\n" % json.dumps(data)


def _hosts(data):
    names = set(data["_meta"]["hostvars"])
    for name, group in data.items():
        if name != "_meta":
            names.update(group.get("hosts") or [])
    return names


def job_env(job_id, private_data_dir):
    """env/envvars: what RunJob.build_env sets for a job with no cloud or network credential."""
    env = dict(AWX_ANSIBLE_SETTINGS)
    collections = "/runner/requirements_collections:~/.ansible/collections:/usr/share/ansible/collections"
    env.update({
        "AWX_PRIVATE_DATA_DIR": private_data_dir, "JOB_ID": str(job_id), "INVENTORY_ID": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "False", "MAX_EVENT_RES": "700000", "AWX_HOST": "https://awx.example.com",
        "ANSIBLE_SSH_CONTROL_PATH_DIR": "/runner/cp",
        "ANSIBLE_COLLECTIONS_PATHS": collections, "ANSIBLE_COLLECTIONS_PATH": collections,
        "ANSIBLE_ROLES_PATH": "/runner/requirements_roles:~/.ansible/roles:/usr/share/ansible/roles:/etc/ansible/roles",
    })
    return env


def runner_settings(image, pull):
    """env/settings: AWX's runner settings and its execution environment parameters, for docker and the lab."""
    return {
        "job_timeout": JOB_TIMEOUT_S, "suppress_ansible_output": True, "suppress_output_file": True,
        "process_isolation": True, "process_isolation_executable": "docker", "container_image": image,
        "container_options": ["--user=root", "--pull=%s" % pull, "--network=none"],
        "container_volume_mounts": ["%s:%s" % (DOCKER_SOCKET, DOCKER_SOCKET)],
    }


def project_paths(checkout):
    """The checkout's files as a clone has them: tracked or new, never ignored."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=checkout,
                            capture_output=True, check=True).stdout.decode().split("\0")
    return sorted(path for path in listed if path and os.path.lexists(os.path.join(checkout, path)))


def copy_project(checkout, destination):
    for path in project_paths(checkout):
        target = os.path.join(destination, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(checkout, path), target, follow_symlinks=False)


def _write(path, text, mode=0o600):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, mode)


def write_private_data_dir(path, job):
    """Lay out PATH for JOB: {id, template, answers, inventory, limit, image, pull, checkout}."""
    template = job["template"]
    os.makedirs(path, mode=0o700)
    copy_project(job["checkout"], os.path.join(path, "project"))
    os.mkdir(os.path.join(path, "cp"), 0o700)
    _write(os.path.join(path, "inventory", "hosts"), inventory_script(job["inventory"]), mode=0o700)
    extra_vars = dict(template.get("extra_vars") or {})
    extra_vars.update(job["answers"])
    extra_vars.update(job_variables(job["id"], template["name"], "GPU nodes"))
    _write(os.path.join(path, "env", "extravars"), extravars_text(extra_vars, template.get("extra_vars") or {}))
    _write(os.path.join(path, "env", "cmdline"), "-u root --become -l %s" % job["limit"])
    _write(os.path.join(path, "env", "settings"), json.dumps(runner_settings(job["image"], job["pull"])))
    _write(os.path.join(path, "env", "envvars"), yaml.safe_dump(job_env(job["id"], path)))


def run_job(path, playbook, ident):
    """`ansible-runner run` on the private data dir; (its exit code, its output, the job's artifact dir)."""
    runner = os.path.join(os.path.dirname(sys.executable), "ansible-runner")
    done = subprocess.run([runner, "run", path, "--playbook", playbook, "--ident", str(ident)],
                          capture_output=True, text=True, check=False, timeout=JOB_TIMEOUT_S + 60)
    return done.returncode, done.stdout + done.stderr, os.path.join(path, "artifacts", str(ident))
