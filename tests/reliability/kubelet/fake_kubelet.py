# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in for the kubelet in the lab, where no kubelet binary is packaged.

It does only what the kubelet_topology tests lean on: it reads --config, and, as
the real CPU and memory managers do at start, refuses to start when a manager's
state file holds another policy than the file asks for; otherwise it writes the
state file of each manager (keeping one whose policy matches) and stays up.
"""

import json
import os
import sys
import time

import yaml

MANAGERS = (("cpu_manager_state", "cpuManagerPolicy", "none"),
            ("memory_manager_state", "memoryManagerPolicy", "None"))


def main(argv):
    config_path = next(arg.split("=", 1)[1] for arg in argv if arg.startswith("--config="))
    root_dir = argv[argv.index("--root-dir") + 1] if "--root-dir" in argv else "/var/lib/kubelet"
    with open(config_path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle) or {}
    for state_file, key, default in MANAGERS:
        wanted = config.get(key) or default
        path = os.path.join(root_dir, state_file)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                held = json.load(handle).get("policyName")
            if held != wanted:
                sys.stderr.write("could not initialize checkpoint manager: configured policy %r differs from "
                                 "state checkpoint policy %r; remove %s\n" % (wanted, held, path))
                return 1
            continue
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"policyName": wanted, "checksum": 0}, handle)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
