# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia-smi reads one call shares while nothing has changed the node.

Within one node call the engines read the same things (the MIG survey of the first check, then of the
converge; the `-q -x` the MIG check read, then the topology's). A read is kept only as long as the node is
as it was when it was made:

- every successful nvidia-smi read is recorded, fresh or not;
- an engine asks for a recorded one only where it surveys the node before changing it (NvidiaSmi.read);
  a poll (persistence mode read back, a MIG GPU's processes ending, compute modes after a daemon start)
  always runs nvidia-smi again;
- any command that may change the node forgets every record: anything but the read-only commands below
  (systemctl's queries, nvidia-smi's queries, and a few that only look); so does a file moved into place,
  and the end of a feature that changed something or failed;
- nothing outlives the call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

# Commands that only look at the node, by program and first argument (None: any argument).
READ_ONLY = {
    "systemctl": ("show", "is-active", "is-enabled", "is-failed", "is-system-running", "cat", "list-units",
                  "list-unit-files", "status"),
    "getent": None, "id": None, "swapon": ("--show", "--summary", "-s"), "findmnt": None, "uname": None,
    "dpkg-query": None, "rpm": ("-q",), "lsmod": None, "numactl": ("--hardware", "-H"),
}
# Commands that only look when they run with no argument at all (dmesg's options clear the log or set its level).
READ_ONLY_BARE = ("dmesg",)
# nvidia-smi's own queries: what they print changes only when the node does.
SMI_QUERY_FLAGS = ("-q", "--query", "-L", "--list-gpus", "topo", "--help")
SMI_MIG_LISTS = ("-lgip", "-lgipp", "-lgi", "-lci", "-lcip")
# `nvlink` reads with these; its other options reset counters or set them.
SMI_NVLINK_READS = ("-s", "--status")
TIMEOUT_PROGRAM = "timeout"


def command_of(argv):
    """argv without the `timeout --kill-after=N Ns` wrapper commands.run puts in front."""
    argv = list(argv or [])
    if argv and os.path.basename(str(argv[0])) == TIMEOUT_PROGRAM:
        rest = argv[1:]
        while rest and str(rest[0]).startswith("-"):
            rest = rest[1:]
        return rest[1:]  # past the duration
    return argv


def is_nvidia_smi_query(argv):
    """Whether argv (without the timeout wrapper) runs nvidia-smi to read only."""
    if not argv or os.path.basename(str(argv[0])) != "nvidia-smi":
        return False
    args = [str(arg) for arg in argv[1:]]
    if args[:1] == ["topo"]:
        return True
    for subcommand, reads in (("mig", SMI_MIG_LISTS), ("nvlink", SMI_NVLINK_READS)):
        if args[:1] == [subcommand]:
            options = [arg for arg in args[1:] if arg.startswith("-") and arg != "-i"]
            return bool(options) and all(arg in reads for arg in options)
    # -i <gpu> selects a GPU for a query as for a change; the query flag decides.
    changing = [arg for arg in args if is_changing_option(arg)]
    return bool(args) and not changing and any(arg.startswith(SMI_QUERY_FLAGS) for arg in args)


def is_changing_option(arg):
    """Whether an nvidia-smi option (outside `mig`) may change the GPUs: any but the query, format and -i ones."""
    if not arg.startswith("-") or arg in ("-i", "-x", "--xml-format"):
        return False
    return not arg.startswith(SMI_QUERY_FLAGS + ("--format",))


def leaves_node_as_is(argv):
    """Whether running argv (as commands.run gives it) only looks at the node."""
    command = command_of(argv)
    if not command:
        return False
    if is_nvidia_smi_query(command):
        return True
    program = os.path.basename(str(command[0]))
    if program in READ_ONLY_BARE and len(command) == 1:
        return True
    if program not in READ_ONLY:
        return False
    verbs = READ_ONLY[program]
    return verbs is None or (len(command) > 1 and str(command[1]) in verbs)


class SharedReads(object):
    """nvidia-smi outcomes by argv, kept while nothing has changed the node (see the module's docstring)."""

    def __init__(self):
        self._outcomes = {}
        self.answered = 0  # how many reads a record answered, for the call's result

    def recorded(self, argv):
        """The (rc, stdout, stderr) of argv read since the last change, or None."""
        found = self._outcomes.get(tuple(argv))
        if found is not None:
            self.answered += 1
        return found

    def record(self, argv, outcome):
        """Keep a successful nvidia-smi read's outcome (exit code 6 of a MIG list: none found)."""
        if not isinstance(outcome, tuple) or not is_nvidia_smi_query(argv):
            return
        found_none = len(argv) > 1 and str(argv[1]) == "mig" and outcome[0] == 6
        if outcome[0] == 0 or found_none:
            self._outcomes[tuple(argv)] = outcome

    def seen(self, argv):
        """A command about to run: a change forgets every record."""
        if not leaves_node_as_is(argv):
            self.forget()

    def forget(self):
        self._outcomes.clear()
