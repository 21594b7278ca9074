# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops-mig-boot RECORD [--root DIR]: re-applies the MIG layout the mig role recorded.

Run by gpuops-mig.service at boot, before any GPU client starts, so no client
needs stopping. The work is the collection's own MIG engine (module_utils
mig_converge and the files it imports), installed unchanged by the role in
../lib/gpuops-hardening/mig beside this script, laid out as the collection's
package so that its imports hold; run from a checkout, it is the checkout's.
Exit status: 0 when every GPU has its layout, 1 when something failed or still
waits for a reset or reboot, 2 when it cannot start (a bad record or command
line, the engine missing). --root is where
/sys is read from (tests; a boot uses /).
"""

import argparse
import json
import os
import subprocess
import sys


def _give_up(message):
    """Exit 2: this run cannot even start (bad record or command line, no engine)."""
    print("gpuops-mig-boot: " + message, file=sys.stderr)
    sys.exit(2)


def _library():
    here = os.path.dirname(os.path.realpath(__file__))
    # Installed by the role; in an installed collection (roles/mig/files); in a checkout.
    for candidate in (os.path.join(here, "..", "lib", "gpuops-hardening", "mig"),
                      os.path.join(here, "..", "..", "..", "..", "..", ".."),
                      os.path.join(here, "..", "..", "..", "playbooks", "collections")):
        engine = os.path.join(candidate, "ansible_collections", "gpuops", "hardening", "plugins", "module_utils",
                              "mig_converge.py")
        if os.path.isfile(engine):
            return os.path.normpath(candidate)
    _give_up("the MIG engine is missing from %s; re-run the mig role"
             % os.path.normpath(os.path.join(here, "..", "lib", "gpuops-hardening", "mig")))


sys.path.insert(0, _library())
from ansible_collections.gpuops.hardening.plugins.module_utils import mig_converge  # noqa: E402 pylint: disable=wrong-import-position


class BootSmi(object):
    """nvidia-smi, as the engine calls it, through subprocess with a timeout."""

    def __init__(self, timeout):
        self.timeout = timeout
        self.environment = dict(os.environ, LC_ALL="C")

    def call(self, args, allowed_rc=(0,)):
        argv = ["nvidia-smi"] + list(args)
        try:
            done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                                  env=self.environment, timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired:
            raise mig_converge.SmiError("%s did not answer within %d seconds" % (" ".join(argv), self.timeout))
        except OSError as error:
            raise mig_converge.SmiError("%s could not run: %s" % (" ".join(argv), error))
        if done.returncode not in allowed_rc:
            raise mig_converge.SmiError("nvidia-smi %s failed with exit code %d: %s"
                                        % (" ".join(args), done.returncode, done.stdout.strip()))
        return done.stdout

    # The engine's survey reads: at boot nothing is shared, every read runs nvidia-smi.
    read = call


def read_record(path):
    """(layouts by GPU index, options) from the role's record; exits 2 when it is unusable."""
    try:
        with open(path) as handle:
            record = json.load(handle)
        layouts = dict((int(index), layout) for index, layout in record["layouts"].items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        _give_up("%s is not a layout record: %s" % (path, error))
    return layouts, record


def summary(gpu):
    """One line per GPU for the journal: the engine's summary, and what this run did."""
    created = gpu.get("created") or gpu.get("create") or []
    return "GPU %s: %s (%d instances kept, %d created, %d destroyed)" % (
        gpu["index"], gpu.get("summary", "not reached"), len(gpu.get("keep") or []), len(created),
        len(gpu.get("destroy") or []))


def main(argv):
    parser = argparse.ArgumentParser(prog="gpuops-mig-boot", description="Re-apply the recorded MIG layout.")
    parser.add_argument("record")
    parser.add_argument("--root", default="/")
    options = parser.parse_args(argv)
    layouts, record = read_record(options.record)
    smi = BootSmi(int(record.get("timeout", 120)))
    try:
        result = mig_converge.converge(smi, layouts, force=bool(record.get("force", False)),
                                       reset=bool(record.get("reset", True)), clients=None, root=options.root)
    except mig_converge.MigError as error:
        for gpu in getattr(error, "result", {}).get("gpus", []):
            print(summary(gpu))
        print("gpuops-mig-boot: %s" % error, file=sys.stderr)
        return 1
    except mig_converge.SmiError as error:
        print("gpuops-mig-boot: %s" % error, file=sys.stderr)
        return 1
    for gpu in result["gpus"]:
        print(summary(gpu))
    if not result.get("applied"):
        print("gpuops-mig-boot: the layout is not fully applied yet", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
