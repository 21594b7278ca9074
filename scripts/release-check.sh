#!/usr/bin/env bash
# `make release-check`: the collection as Automation Hub receives it.
# - the changelog: antsibull-changelog lint, CHANGELOG.rst is what it generates,
#   and galaxy.yml's version is a recorded release;
# - the built artifact: what ships (scripts/check_artifact.py);
# - galaxy-importer with Automation Hub's settings (scripts/galaxy-importer.cfg),
#   which must pass with no warning at all.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv
cd "${REPO_ROOT}"

work="${STATE_DIR}/release-check"
rm -rf "${work}"
mkdir -p "${work}"

log "changelog: lint, and CHANGELOG.rst as antsibull-changelog generates it"
antsibull-changelog lint
mkdir -p "${work}/changelog"
cp -r galaxy.yml CHANGELOG.rst changelogs plugins "${work}/changelog/"
(cd "${work}/changelog" && antsibull-changelog generate >/dev/null)
diff -u CHANGELOG.rst "${work}/changelog/CHANGELOG.rst" \
  || die "CHANGELOG.rst is not what antsibull-changelog generates from changelogs/changelog.yaml; run: antsibull-changelog generate"
python - <<'PY' || die "galaxy.yml's version has no release in changelogs/changelog.yaml; run: antsibull-changelog release"
import sys, yaml
version = yaml.safe_load(open("galaxy.yml"))["version"]
releases = yaml.safe_load(open("changelogs/changelog.yaml"))["releases"] or {}
sys.exit(0 if version in releases else 1)
PY

log "build the artifact and check what ships"
ansible-galaxy collection build --force --output-path "${work}" >/dev/null
artifact="$(ls "${work}"/gpuops-hardening-*.tar.gz)"
python scripts/check_artifact.py "${artifact}"

importer_venv="${STATE_DIR}/galaxy-importer-venv"
stamp="${importer_venv}/.requirements-$(content_hash scripts/galaxy-importer-requirements.txt)"
if [ ! -f "${stamp}" ]; then
  log "Creating ${importer_venv}"
  rm -rf "${importer_venv}"
  python3 -m venv "${importer_venv}"
  "${importer_venv}/bin/pip" install -q -r scripts/galaxy-importer-requirements.txt >"${STATE_DIR}/galaxy-importer-pip.log" 2>&1 \
    || { tail -n 20 "${STATE_DIR}/galaxy-importer-pip.log" >&2; die "could not install galaxy-importer"; }
  touch "${stamp}"
fi

log "galaxy-importer with Automation Hub's settings"
# Its flake8 and ansible-lint are looked up on PATH; take the importer venv's.
(cd "${work}" && PATH="${importer_venv}/bin:${PATH}" GALAXY_IMPORTER_CONFIG="${REPO_ROOT}/scripts/galaxy-importer.cfg" \
  "${importer_venv}/bin/python" -m galaxy_importer.main "${artifact}") >"${work}/galaxy-importer.log" 2>&1 \
  || { tail -n 30 "${work}/galaxy-importer.log" >&2; die "galaxy-importer failed; log: ${work}/galaxy-importer.log"; }
if grep -E '^(WARNING|ERROR)' "${work}/galaxy-importer.log" >&2; then
  die "galaxy-importer warned (above); Automation Hub shows every warning on the collection's page"
fi
grep -q '^Importer processing completed successfully' "${work}/galaxy-importer.log" \
  || die "galaxy-importer did not report success; log: ${work}/galaxy-importer.log"
log "galaxy-importer: $(basename "${artifact}") imports with no warning"
