# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The baseline's PCIe link check: PASS at the link's maximum generation and width under load, WARN below either
(naming what it read, the expected and the fix), SKIP where nothing could read it; and the read's time bound."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils import gpu_baseline as plan
from ansible_collections.gpuops.hardening.tests.unit.plugins.module_utils.test_gpu_baseline_utils import CHECK_KEYS, gpu

GIB = 1024 * 1024 * 1024


def read(gen_current, width_current, gen_max=5, width_max=16, copies=40, copies_before=3):
    return {"ok": True, "bytes": GIB, "copies": copies, "copies_before": copies_before,
            "link": {"gen_current": gen_current, "gen_max": gen_max, "width_current": width_current,
                     "width_max": width_max}}


def test_full_generation_and_width_under_load_pass():
    item = plan.link_check(gpu(), read(5, 16))
    assert tuple(item) == CHECK_KEYS
    assert (item["id"], item["area"], item["title"]) == ("baseline.gpu0.pcie_link_under_load", "baseline",
                                                         "GPU 0 PCIe link under load")
    assert (item["verdict"], item["expected"], item["actual"]) == ("PASS", "Gen5 x16", "Gen5 x16")
    assert item["reason"] == ("the link runs at its generation and width under load; read during back-to-back pinned "
                              "host-to-device copies of 1 GiB (40 copies; the read began after copy 3)")


@pytest.mark.parametrize("gen, width, actual", [(3, 16, "Gen3 x16"), (5, 8, "Gen5 x8"), (1, 4, "Gen1 x4")])
def test_a_lower_generation_or_width_under_load_warns_with_the_fix(gen, width, actual):
    item = plan.link_check(gpu(index=3), read(gen, width))
    assert (item["verdict"], item["expected"], item["actual"]) == ("WARN", "Gen5 x16", actual)
    assert item["reason"].startswith("under load the link runs at %s, below its Gen5 x16: reseat the GPU, check its "
                                     "riser and cabling, and the slot's PCIe generation setting in the BIOS; read "
                                     "during back-to-back pinned host-to-device copies of 1 GiB" % actual)


def test_the_expected_is_what_the_link_can_reach_on_this_host():
    # A Gen5 GPU in a Gen4 slot: NVML's maximum is the link's, Gen4, so Gen4 under load passes here (the audit's
    # pcie_gen check names the slot that caps the GPU).
    assert plan.link_check(gpu(), read(4, 16, gen_max=4))["verdict"] == "PASS"


def test_skips_and_failures_say_why():
    assert plan.link_check(gpu(), None, skip_reason="MIG is on")["verdict"] == "SKIP"
    failed = plan.link_check(gpu(), None, error="copy in a fresh process failed")
    assert (failed["verdict"], failed["actual"], failed["reason"]) == ("WARN", "not read", "copy in a fresh process failed")
    unsupported = plan.link_check(gpu(), {"ok": False, "error": "libnvidia-ml.so.1 cannot be loaded", "unsupported": True})
    assert (unsupported["verdict"], unsupported["reason"]) == ("SKIP", "libnvidia-ml.so.1 cannot be loaded")
    late = plan.link_check(gpu(), {"ok": False, "error": "the link read did not return within 10.0 seconds of copies"})
    assert late["verdict"] == "WARN" and late["reason"].startswith("the link read did not return")
    assert plan.link_check(gpu(), None)["reason"] == "no answer"


@pytest.mark.parametrize("timeout, seconds", [(120, 10.0), (60, 10.0), (20, 5.0), (2, 1.0), (1, 1.0)])
def test_the_read_takes_at_most_ten_seconds_and_a_quarter_of_the_timeout(timeout, seconds):
    assert plan.link_read_seconds(timeout) == seconds
