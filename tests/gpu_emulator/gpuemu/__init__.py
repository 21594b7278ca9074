# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuemu: the project's test double of the NVIDIA tools (nvidia-smi, nvidia-persistenced,
nvidia-cuda-mps-control), driven by a JSON state file built from a hardware profile.

It is only for tests and the lab; the roles never install it.
"""
