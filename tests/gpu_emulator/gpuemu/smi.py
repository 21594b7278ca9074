# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi: option parsing and dispatch to the renderers and controls."""

import os

from . import (pci, runtime, smi_control, smi_list, smi_mig, smi_nvlink, smi_query, smi_summary, smi_topo, state as state_file, texts,
               visibility)

OPTIONS = {
    "-i": "id", "--id": "id",
    "-L": "list", "--list-gpus": "list",
    "-q": "query", "--query": "query",
    "-x": "xml", "--xml-format": "xml",
    "-pm": "pm", "--persistence-mode": "pm",
    "-c": "compute", "--compute-mode": "compute",
    "-mig": "mig", "--multi-instance-gpu": "mig",
    "-r": "reset", "--gpu-reset": "reset",
    "--query-gpu": "query_gpu",
    "--query-compute-apps": "query_apps",
    "--format": "format",
    "-h": "help", "--help": "help",
    "--version": "version",
}
WITH_VALUE = {"id", "pm", "compute", "mig", "query_gpu", "query_apps", "format"}
CHANGES = ("pm", "compute", "mig", "reset")

USAGE = """NVIDIA System Management Interface -- v%s

nvidia-smi [OPTION1 [ARG1]] [OPTION2 [ARG2]] ...

    -h,   --help                Print usage information and exit.
    -L,   --list-gpus           Display a list of GPUs connected to the system.
    -i,   --id=                 Target a specific GPU.
    -q,   --query               Display GPU or Unit info.
    -x,   --xml-format          Produce XML output.
    --query-gpu=                Information about GPU.
    --query-compute-apps=       List of active compute processes.
    --format=                   Comma separated list of format options: csv, noheader, nounits.
    -pm,  --persistence-mode=   Set persistence mode: 0/DISABLED, 1/ENABLED
    -c,   --compute-mode=       Set MODE for compute applications: 0/DEFAULT, 2/PROHIBITED, 3/EXCLUSIVE_PROCESS
    -r,   --gpu-reset           Trigger reset of the GPU.
    -mig, --multi-instance-gpu= Enable or disable Multi Instance GPU: 0/DISABLED, 1/ENABLED

    topo -m                     Display the GPU/NIC topology matrix.
    nvlink -s                   Display the status of each NVLink link.
    mig                         Multi Instance GPU management (-lgip, -lgipp, -lgi, -lci, -lcip, -cgi, -cci, -dci, -dgi).
"""


def parse(argv):
    options = {}
    tokens = list(argv)
    while tokens:
        token = tokens.pop(0)
        name, equals, inline = token.partition("=")
        key = OPTIONS.get(name)
        if key is None:
            return None, (texts.RC_OTHER, texts.UNKNOWN_OPTION % name)
        if key in WITH_VALUE:
            if equals:
                options[key] = inline
            elif tokens:
                options[key] = tokens.pop(0)
            else:
                return None, (texts.RC_INVALID_ARGUMENT, texts.INVALID_COMBINATION)
        else:
            options[key] = True
    return options, None


def select_gpus(state, id_text):
    """(gpus, None) or (None, (rc, stdout)) for -i: indexes, UUIDs or PCI bus ids."""
    if id_text is None:
        return state["gpus"], None
    chosen = []
    for token in id_text.split(","):
        token = token.strip()
        match = None
        for gpu in state["gpus"]:
            if token == str(gpu["index"]) or token.lower() == gpu["uuid"].lower():
                match = gpu
            elif ":" in token and "." in token:
                try:
                    if pci.split(token) == pci.split(gpu["pci_bus_id"]):
                        match = gpu
                except ValueError:
                    pass
        if match is None:
            return None, (texts.RC_QUERY_FAILED, texts.NO_DEVICES)
        if match not in chosen:
            chosen.append(match)
    return chosen, None


def _version(state):
    return "NVIDIA-SMI version  : %s\nNVML version        : %s\nDRIVER version      : %s\nCUDA Version        : %s\n" % (
        state["driver_version"], state["driver_version"].rsplit(".", 1)[0], state["driver_version"], state["cuda_version"])


def run(state, argv, state_path):
    """Returns (rc, stdout). Changes are written back to state_path."""
    if argv and argv[0] == "topo":
        if argv[1:] in (["-m"], ["--matrix"]):
            return texts.RC_OK, smi_topo.render(state)
        if not argv[1:]:
            return texts.RC_OK, smi_topo.HELP
        # Only the matrix is emulated.
        return texts.RC_INVALID_ARGUMENT, texts.INVALID_COMBINATION
    if argv and argv[0] == "nvlink":
        return smi_nvlink.run(state, argv[1:], lambda text: select_gpus(state, text))
    if argv and argv[0] == "mig":
        if not smi_mig.changes(argv[1:]):
            return smi_mig.run(state, argv[1:], lambda text: select_gpus(state, text))
        if runtime.effective_uid() != 0:
            # Refused before anything changes, without the lock an unprivileged user cannot take.
            return smi_mig.run(state, argv[1:], lambda text: select_gpus(state, text), privileged=False)
        with state_file.editing(state_path) as live:
            outcome = smi_mig.run(live, argv[1:], lambda text: select_gpus(live, text))
        _mig_cap_nodes(live)
        return outcome
    options, error = parse(argv)
    if error:
        return error
    if options.get("help"):
        return texts.RC_OK, USAGE % state["driver_version"]
    if options.get("version"):
        return texts.RC_OK, _version(state)
    if any(key in options for key in CHANGES):
        if runtime.effective_uid() != 0:
            # Refused before the state is touched: an unprivileged user cannot write it.
            return _denied(state, options)
        return _change(options, state_path)
    # What a container given only some device nodes sees (visibility.py); the host sees all.
    state = visibility.visible_state(state)
    gpus, error = select_gpus(state, options.get("id"))
    if error:
        return error
    if "query_gpu" in options or "query_apps" in options:
        query = smi_query.query_gpus if "query_gpu" in options else smi_query.query_apps
        fields = options.get("query_gpu", options.get("query_apps"))
        return query(state, gpus, fields, options.get("format"))
    if options.get("list"):
        if "id" in options:
            return texts.RC_INVALID_ARGUMENT, texts.OPTION_NOT_VALID % "-i"
        return texts.RC_OK, smi_list.render(state, gpus)
    if options.get("query") and options.get("xml"):
        # Imported here: xml.sax.saxutils brings urllib, which no other query needs.
        from . import smi_xml
        return texts.RC_OK, smi_xml.render(state, gpus)
    if options.get("xml"):
        return texts.RC_INVALID_ARGUMENT, texts.XML_NEEDS_QUERY
    if options.get("query"):
        # Only the XML form of -q is emulated.
        return texts.RC_INVALID_ARGUMENT, texts.INVALID_COMBINATION
    return texts.RC_OK, smi_summary.render(state, gpus)


def _mig_cap_nodes(state):
    """Where the emulated driver's nodes are (a lab node), a new MIG instance's capability nodes
    appear as nvidia-modprobe makes them on demand (NVIDIA/nvidia-modprobe option-table.h,
    --nvidia-capability-device-file). Imported here: only a MIG change needs the installer."""
    dev = visibility.dev_root(state)
    if visibility.driver_loaded(dev):
        from . import installer
        installer.device_nodes(os.path.dirname(os.path.abspath(dev)), state)


def _denied(state, options):
    gpus, error = select_gpus(state, options.get("id"))
    if error:
        return error
    key = next(key for key in CHANGES if key in options)
    return smi_control.denied(gpus, key, options.get(key) if key != "reset" else "")


def _change(options, state_path):
    with state_file.editing(state_path) as live:
        gpus, error = select_gpus(live, options.get("id"))
        if error:
            return error
        if "pm" in options:
            return smi_control.persistence(live, gpus, options["pm"])
        if "compute" in options:
            return smi_control.compute_mode(gpus, options["compute"])
        if "mig" in options:
            return smi_control.mig_mode(live, gpus, options["mig"])
        return smi_control.reset(live, gpus)
