# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.hardening.container_runtime on a root that is not booted (an image being built): the toolkit's CDI
refresh units are enabled as `systemctl enable` would, so the image has its spec from its first boot."""

from __future__ import annotations

from ansible_collections.gpuops.hardening.tests.unit.plugins.modules.test_container_runtime import (  # noqa: F401 pylint: disable=unused-import
    node, run)


def test_on_a_root_that_is_not_booted_the_refresh_units_are_linked_for_its_first_boot(node):
    node.install("podman")
    node.refresh_units()
    # An image being built: no running systemd below the root.
    node.path("/run/systemd/system").rmdir()
    checked = run(node, check_mode=True)
    assert checked["refresh_units"] == {"shipped": True, "changed": True}
    wants = node.path("/etc/systemd/system/multi-user.target.wants")
    assert not wants.exists()
    result = run(node)
    assert not result["failed"], result
    assert result["refresh_units"] == {"shipped": True, "changed": True}
    for unit in ("nvidia-cdi-refresh.path", "nvidia-cdi-refresh.service"):
        assert (wants / unit).is_symlink() and str((wants / unit).readlink()) == "/etc/systemd/system/" + unit
    assert node.calls == []
    assert run(node)["refresh_units"] == {"shipped": True, "changed": False}
