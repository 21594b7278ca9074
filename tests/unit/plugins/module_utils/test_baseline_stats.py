# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The baseline's statistics: median, min and max of N runs, bandwidths, ratios and labels."""

from __future__ import annotations

import pytest

from ansible_collections.gpuops.hardening.plugins.module_utils.baseline_stats import (
    MIB,
    bandwidths,
    figure_median,
    figure_text,
    median,
    ratio,
    size_label,
    summarize,
)


@pytest.mark.parametrize("values, expected", [
    ([3.0], 3.0),
    ([5.0, 1.0, 3.0], 3.0),
    ([4.0, 1.0, 3.0, 2.0], 2.5),
    ([2.0, 2.0], 2.0),
])
def test_median(values, expected):
    assert median(values) == expected


def test_median_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        median([])


def test_summary_keeps_the_extremes_and_the_count():
    assert summarize([0.3, 0.1, 0.2, 0.9]) == {"median": pytest.approx(0.25), "min": 0.1, "max": 0.9, "runs": 4}


def test_bandwidth_is_decimal_gigabytes_a_second():
    # 1 GiB in 0.04 s: 26.84 GB/s, the way NVIDIA quotes link rates (10^9 bytes).
    assert bandwidths(1024 * MIB, [0.04]) == [pytest.approx(26.8435456)]


def test_a_zero_time_is_left_out():
    assert bandwidths(MIB, [0.0, 0.001]) == [pytest.approx(1.048576)]


def test_ratio_of_medians():
    assert ratio({"median": 50.0}, {"median": 20.0}) == 2.5
    assert ratio(None, {"median": 20.0}) is None
    assert ratio({"median": 50.0}, {"median": 0.0}) is None


@pytest.mark.parametrize("size, label", [(MIB, "1 MiB"), (64 * MIB, "64 MiB"), (1024 * MIB, "1 GiB"), (3000, "3000 B")])
def test_size_label(size, label):
    assert size_label(size) == label


def test_figure_text():
    summary = {"median": 0.4123, "min": 0.4, "max": 0.5, "runs": 5}
    assert figure_text(summary, "ms", scale=1000.0, digits=1) == "412.3 ms (min 400.0, max 500.0, 5 runs)"
    assert figure_text({"median": 24.5, "min": 24.1, "max": 24.62, "runs": 3}, "GB/s") == "24.50 GB/s (min 24.10, max 24.62, 3 runs)"


@pytest.mark.parametrize("summary, unit, scale, digits", [
    ({"median": 24.51, "min": 24.1, "max": 24.62, "runs": 5}, "GB/s", 1.0, 2),
    ({"median": 0.0123, "min": 0.011, "max": 0.02, "runs": 3}, "ms", 1000.0, 1),
])
def test_figure_median_reads_back_what_figure_text_wrote(summary, unit, scale, digits):
    text = figure_text(summary, unit, scale=scale, digits=digits)
    assert figure_median(text, unit, scale=scale) == pytest.approx(summary["median"], rel=0.01)


@pytest.mark.parametrize("text", ["not measured", "", None, "1.5x at 1 GiB", "fast GB/s (min 1, max 2, 3 runs)"])
def test_figure_median_of_no_figure_is_none(text):
    assert figure_median(text, "GB/s") is None
