# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The data the emulator ships: hardware profiles and per-model GPU facts.

Profiles are looked up in $GPUEMU_PROFILES, then in ``profiles/`` beside the package
(the repository layout, and /opt/gpuemu/profiles when tests/gpu_emulator is copied to
/opt/gpuemu), then in ``profiles/`` inside the package.
"""

import functools
import json
import os

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def profile_dirs():
    dirs = []
    if os.environ.get("GPUEMU_PROFILES"):
        dirs.append(os.environ["GPUEMU_PROFILES"])
    dirs.append(os.path.join(os.path.dirname(PACKAGE_DIR), "profiles"))
    dirs.append(os.path.join(PACKAGE_DIR, "profiles"))
    return [d for d in dirs if os.path.isdir(d)]


def profile_names():
    names = set()
    for directory in profile_dirs():
        names.update(n[:-5] for n in os.listdir(directory) if n.endswith(".json"))
    return sorted(names)


def load_profile(name_or_path):
    """A profile by name, or from a JSON file path."""
    if name_or_path.endswith(".json") and os.path.isfile(name_or_path):
        path = name_or_path
    else:
        candidates = [os.path.join(d, name_or_path + ".json") for d in profile_dirs()]
        found = [c for c in candidates if os.path.isfile(c)]
        if not found:
            raise KeyError("unknown profile %r; known: %s" % (name_or_path, ", ".join(profile_names())))
        path = found[0]
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


@functools.lru_cache(maxsize=1)
def _model_data():
    with open(os.path.join(PACKAGE_DIR, "models.json"), encoding="utf-8") as handle:
        return json.load(handle)


def model(name):
    return _model_data()["models"][name]


def model_names():
    return sorted(_model_data()["models"])


def mig_table(model_name):
    """The MIG GPU-instance profile table of a model, or None when it has no MIG."""
    key = model(model_name)["mig"]
    return _model_data()["mig_tables"][key] if key else None


def compute_instance_profiles(gi_compute_slices):
    """The compute-instance profile ids a GPU instance of that many compute slices offers."""
    return _model_data()["compute_instance_profiles"][str(gi_compute_slices)]
