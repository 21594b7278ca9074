#!/bin/sh
# The device check's entry point (make device-check OUT=dir): read-only checks of this machine's
# real NVIDIA GPUs, needing nothing installed but Python 3.8 or later and the driver.
#   device-check.sh OUT [--root DIR] [--runs N] [--budget SECONDS] [--skip facts|baseline|audit]...
# It checks for Python first, then runs device_check.py from the bundle: the folder this script
# sits in when it is the bundle's copy, else $DEVICE_CHECK_BUNDLE, else the checkout's
# build/device-check, which it builds first where the checkout has its .venv
# (scripts/device_check_bundle.py). PYTHON names the interpreter (default: python3 on PATH).
set -eu

say() { printf 'device-check: %s\n' "$*" >&2; }

here=$(cd "$(dirname "$0")" && pwd)
repo=""
if [ -f "${here}/bundle.json" ]; then
  bundle=${here}
else
  repo=$(cd "${here}/.." && pwd)
  bundle=${DEVICE_CHECK_BUNDLE:-${repo}/build/device-check}
fi

if [ $# -lt 1 ] || [ -z "$1" ]; then
  say "usage: device-check.sh OUT [--root DIR] [--runs N] [--budget SECONDS] [--skip facts|baseline|audit]... (make device-check OUT=dir)"
  exit 2
fi

# Python first: the check is Python, and a bare machine may have none or a partial one.
python=$(command -v "${PYTHON:-python3}" 2>/dev/null || true)
if [ -z "${python}" ]; then
  say "Python is missing: no ${PYTHON:-python3} on PATH. The check needs Python 3.8 or later and nothing else:"
  say "install it (Debian, Ubuntu: apt-get install python3; RHEL, Rocky: dnf install python3) or set PYTHON to one."
  exit 3
fi
missing=$("${python}" - <<'PY' 2>&1 || printf 'a Python that starts'
import sys
if sys.version_info < (3, 8):
    print("Python 3.8 or later (this one is %d.%d)" % sys.version_info[:2])
    sys.exit(0)
import importlib
MODULES = ("argparse", "ast", "base64", "csv", "ctypes", "json", "platform", "runpy", "shlex", "signal", "socket",
           "statistics", "subprocess", "tempfile", "xml.etree.ElementTree", "zipfile")
lacking = []
for name in MODULES:
    try:
        importlib.import_module(name)
    except ImportError:
        lacking.append(name)
if lacking:
    print("the standard library modules %s (a minimal Python: install the full one, e.g. apt-get install python3)" % ", ".join(lacking))
PY
)
if [ -n "${missing}" ]; then
  say "${python} is not enough: it lacks ${missing}"
  exit 3
fi

if [ -n "${repo}" ] && [ -z "${DEVICE_CHECK_BUNDLE:-}" ] && [ -x "${repo}/.venv/bin/python" ]; then
  say "building ${bundle}"
  "${repo}/.venv/bin/python" "${repo}/scripts/device_check_bundle.py" "${bundle}" >&2
fi
if [ ! -f "${bundle}/device_check.py" ] || [ ! -f "${bundle}/bundle.json" ]; then
  say "no bundle at ${bundle}: build it where the checkout has its virtualenv (make device-check-bundle)"
  say "and copy build/device-check here, or point DEVICE_CHECK_BUNDLE at a copy."
  exit 3
fi
exec "${python}" "${bundle}/device_check.py" "$@"
