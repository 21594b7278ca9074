#!/usr/bin/env bash
# Opens the audit's fleet report in headless Chromium and checks what a person sees
# (tests/browser). GPUOPS_AUDIT_REPORT_DIR names a report folder (fleet.html and
# nodes/<node>.json); without it the test renders a sample one. GPUOPS_AUDIT_SCREENSHOT
# names the PNG to write. Extra arguments go to pytest.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

require_command chromium "Install Chromium: apt-get install chromium chromium-driver (or run: make deps)."
require_command chromedriver "Install its driver: apt-get install chromium-driver (or run: make deps)."
activate_venv
cd "${REPO_ROOT}"
export GPUOPS_AUDIT_REPORT_DIR="${GPUOPS_AUDIT_REPORT_DIR:-}"
export GPUOPS_AUDIT_SCREENSHOT="${GPUOPS_AUDIT_SCREENSHOT:-}"
python -m pytest -q -p no:cacheprovider tests/browser "$@"
