"""Offline stand-in for the get-pip.py bootstrap script that ansible-test downloads.

ansible-test runs this file as __main__ with pip-install arguments plus
--no-setuptools and --no-wheel. Instead of unpacking an embedded pip, bootstrap pip
from the interpreter's own ensurepip, then run the requested install with the
machine's normal pip configuration (ensurepip points PIP_CONFIG_FILE at /dev/null,
which would hide the configured index and certificates).
"""
import ensurepip
import os
import subprocess
import sys

DROPPED_ARGS = {"--no-setuptools", "--no-wheel"}


def main():
    saved_config = os.environ.get("PIP_CONFIG_FILE")
    ensurepip.bootstrap(upgrade=True)
    args = [arg for arg in sys.argv[1:] if arg not in DROPPED_ARGS]
    env = dict(os.environ)
    env.pop("PIP_CONFIG_FILE", None)
    if saved_config is not None:
        env["PIP_CONFIG_FILE"] = saved_config
    if not args:
        return 0
    return subprocess.call([sys.executable, "-m", "pip", "install"] + args, env=env)


if __name__ == "__main__":
    sys.exit(main())
