#!/usr/bin/env bash
# Builds the execution environment image from execution-environment.yml and
# prints its name (REPOSITORY:<key>). It is also tagged as the image AWX is
# configured with (gpuops_awx_ee_image in playbooks/awx/configure.yml, which
# names REPOSITORY and the release).
#
# ansible-builder v3 generates the context and builds it with docker. Its RUN
# steps pip-install ansible-core and ansible-runner from PyPI, and the engine runs
# without a bridge network, so the build uses the host's network
# (--extra-build-cli-args "--network host"); the EE's jobs run without one.
# The collections come from copies staged in build/ee/collections: this
# checkout's collection tarball and community.docker from the venv's `ansible`.
# The image is cached, keyed by the EE definition, the collection's files and the
# base image (scripts/lab/build-image.sh ee-base).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
activate_venv
cd "${REPO_ROOT}"

awx_image="$(python -c 'import yaml; print(yaml.safe_load(open("playbooks/awx/configure.yml"))[0]["vars"]["gpuops_awx_ee_image"])')"
stage="${REPO_ROOT}/build/ee"
logdir="${STATE_DIR}/logs"
mkdir -p "${logdir}"

scripts/lab/docker-up.sh
scripts/lab/build-image.sh ee-base >&2

# Stage the collections ee/requirements.yml names.
rm -rf "${stage}"
mkdir -p "${stage}/collections"
ansible-galaxy collection build --force --output-path "${stage}" >/dev/null
mv "${stage}"/gpuops-hardening-*.tar.gz "${stage}/collections/gpuops-hardening.tar.gz"
site_collections="$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/ansible_collections"
for name in community.docker community.library_inventory_filtering_v1; do
  cp -r "${site_collections}/${name%%.*}/${name#*.}" "${stage}/collections/${name}"
  find "${stage}/collections/${name}" -name __pycache__ -prune -exec rm -rf {} +
done

# The tarball's file contents, not its bytes: a rebuild stamps new mtimes.
key="$({
  cat execution-environment.yml ee/requirements.yml
  tar -xzOf "${stage}/collections/gpuops-hardening.tar.gz"
  cat "${stage}"/collections/community.*/MANIFEST.json
  docker image inspect --format '{{.Id}}' "$(python -c 'import yaml; print(yaml.safe_load(open("execution-environment.yml"))["images"]["base_image"]["name"])')"
} | sha256sum | cut -c1-16)"
image="${awx_image%:*}:${key}"

if docker image inspect "${image}" >/dev/null 2>&1; then
  log "Execution environment ${image} present"
else
  log "Building the execution environment ${image} (log: ${logdir}/ee-build.log)"
  start=${SECONDS}
  ansible-builder build --file execution-environment.yml --context "${stage}/context" \
    --container-runtime docker --tag "${image}" --extra-build-cli-args "--network host" \
    --verbosity 2 >"${logdir}/ee-build.log" 2>&1 \
    || { tail -n 40 "${logdir}/ee-build.log" >&2; die "ansible-builder build failed"; }
  log "Execution environment built in $((SECONDS - start))s"
fi
docker tag "${image}" "${awx_image}"
printf '%s\n' "${image}"
