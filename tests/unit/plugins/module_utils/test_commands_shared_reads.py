# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commands.shared_reads: within the block, a read-only command runs once per argv and input."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.commands import CommandTimeout, run, shared_reads
from ansible_collections.gpuops.hardening.plugins.module_utils.precheck import is_shared_query


class CountingModule:
    """Answers every command with how many times it was run; 'hang' runs past its timeout."""

    params = {}

    def __init__(self):
        self.runs = []

    @staticmethod
    def get_bin_path(name):
        return "/usr/bin/" + name

    def run_command(self, argv, environ_update=None, data=None, check_rc=False):  # pylint: disable=unused-argument
        command = argv[3:]  # past timeout's own arguments
        self.runs.append(command)
        if command[-1] == "hang":
            return 124, "", ""
        return 0, "run %d\n" % self.runs.count(command), ""


SMI = "/usr/bin/nvidia-smi"


def test_a_query_asked_twice_runs_once_and_a_change_runs_every_time():
    module = CountingModule()
    with shared_reads(is_shared_query):
        assert run(module, [SMI, "-q", "-x"]) == (0, "run 1\n", "")
        assert run(module, [SMI, "-q", "-x"]) == (0, "run 1\n", "")
        assert run(module, [SMI, "-i", "0", "-c", "3"]) == (0, "run 1\n", "")
        assert run(module, [SMI, "-i", "0", "-c", "3"]) == (0, "run 2\n", "")
        # Another input is another question.
        assert run(module, [SMI, "-q", "-x"], environ={"CUDA_VISIBLE_DEVICES": "1"}) == (0, "run 2\n", "")
    assert module.runs.count([SMI, "-q", "-x"]) == 2
    # Outside the block every call runs.
    assert run(module, [SMI, "-q", "-x"]) == (0, "run 3\n", "")


def test_a_query_that_hung_is_not_asked_again():
    module = CountingModule()
    with shared_reads(lambda argv: True):
        with pytest.raises(CommandTimeout):
            run(module, ["/usr/bin/query", "hang"], timeout=5)
        with pytest.raises(CommandTimeout, match="did not finish within 5 seconds"):
            run(module, ["/usr/bin/query", "hang"], timeout=5)
    assert module.runs == [["/usr/bin/query", "hang"]]


@pytest.mark.parametrize("argv, shared", [
    ([SMI, "-q", "-x"], True),
    ([SMI, "-L"], True),
    ([SMI, "--query-gpu=index,uuid", "--format=csv"], True),
    ([SMI, "topo", "-m"], True),
    ([SMI, "mig", "-lgip"], True),
    ([SMI, "mig", "-lci"], True),
    ([SMI, "mig", "-cgi", "19", "-C"], False),
    ([SMI, "-i", "0", "-mig", "1"], False),
    ([SMI, "-pm", "1"], False),
    ([SMI, "-i", "0", "-r"], False),
    ([SMI], False),
    (["/usr/bin/systemctl", "show", "x.service"], False),
])
def test_only_nvidia_smi_queries_are_shared(argv, shared):
    assert is_shared_query(argv) is shared
