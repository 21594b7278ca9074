# gpuops.hardening — developer entry points. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help demo test deps venv lab lab-down lint sanity units sanity-newest units-newest ee browser monitoring containers molecule reliability slurm kernel bench device-check device-check-bundle build release-check clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

demo: ## Build the lab, run site.yml -l gpu_nodes against it, and show each node's state
	@scripts/demo.sh

test: ## Everything CI runs: lint, sanity, units (ansible-core 2.19 and 2.21), emulator tests, Molecule (containers and the VM), the EE
	@scripts/test.sh

deps: ## Install the missing system packages (root, Debian/Ubuntu)
	@scripts/install-deps.sh

venv: ## Create .venv with the pinned Python tooling
	@scripts/venv.sh

lab: venv ## Start the Docker engine (left running) and build the lab image and fake sysfs trees
	@scripts/lab/prepare-lab.sh

lab-down: ## Stop the Docker engine `make lab` started
	@scripts/lab/docker-down.sh

lint: venv ## ansible-lint with the production profile
	@scripts/lint.sh

sanity: venv ## ansible-test sanity (empty ignore files) on ansible-core 2.19, the host venv
	@scripts/ansible-test.sh sanity

units: venv ## ansible-test units on ansible-core 2.19, the host venv
	@scripts/ansible-test.sh units

sanity-newest: venv ## ansible-test sanity on ansible-core 2.21, inside the execution environment image
	@scripts/ansible-test.sh --newest sanity

units-newest: venv ## ansible-test units on ansible-core 2.21, inside the execution environment image
	@scripts/ansible-test.sh --newest units

ee: venv ## Build the execution environment; run site.yml and audit.yml inside it against a lab node
	@scripts/ee-test.sh

browser: venv ## Open the audit's fleet report in headless Chromium and check what it shows
	@scripts/browser-test.sh

monitoring: venv ## The audit's metrics and the alerting rules through promtool (check metrics, check rules, test rules)
	@scripts/monitoring-test.sh

containers: venv ## The container data path against Debian's real Docker, containerd and Podman in a lab node
	@scripts/containers-test.sh

molecule: venv ## Molecule default scenario on the container lab
	@scripts/molecule-scenario.sh default

reliability: venv ## Check mode, bad input, injected faults, interrupted and concurrent runs, on lab nodes of its own
	@scripts/reliability-test.sh

slurm: venv ## The slurm_gres role against the real Slurm 22.05 on a one-node lab cluster
	@scripts/slurm-test.sh

kernel: venv ## Molecule kernel scenario on a qemu VM (live values and reboots)
	@scripts/molecule-scenario.sh kernel

bench: venv ## Whole site.yml (floor, first converge, no-op, round trips per role, facts module, MIG) on 1, 8 and 32 lab nodes; not a test
	@scripts/bench.sh

device-check: ## On a machine with real NVIDIA GPUs: read-only captures, the facts module's cost, the baseline and the audit, into OUT=dir
	@scripts/device-check.sh "$(OUT)"

device-check-bundle: venv ## Build build/device-check, all `make device-check` needs where only Python and the driver are installed
	@.venv/bin/python scripts/device_check_bundle.py build/device-check

release-check: venv ## The changelog, the built artifact's contents and galaxy-importer with Automation Hub's settings
	@scripts/release-check.sh

build: venv ## Build the collection tarball
	@source .venv/bin/activate && ansible-galaxy collection build --force --output-path build/

clean: ## Remove build output, the lab state and the virtualenv
	@scripts/lab/docker-down.sh || true
	rm -rf build .lab .venv tests/output
