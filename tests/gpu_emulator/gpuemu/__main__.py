# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""python3 -m gpuemu {install,sysfs,sysfs-faults,reboot,new-state,profiles,exec} ..."""

import argparse
import json
import sys

from . import catalog, cli, installer, state as state_file, sysfs, units


def _parser():
    parser = argparse.ArgumentParser(prog="python3 -m gpuemu", description="The project's NVIDIA tool emulator (tests and lab only).")
    commands = parser.add_subparsers(dest="command", required=True)
    install = commands.add_parser("install", help="install the emulated tools into a node")
    install.add_argument("--profile", required=True)
    install.add_argument("--root", default="/")
    install.add_argument("--state", default=state_file.DEFAULT_PATH)
    install.add_argument("--omit", action="append", default=[], choices=cli.TOOLS, help="leave this tool out (as if not installed)")
    install.add_argument("--persistenced-unit", choices=units.FLAVOURS, default=None,
                         help="the nvidia-persistenced unit flavour (default: the profile's, else 'default')")
    install.add_argument("--cdi-refresh-units", action="store_true",
                         help="lay down the NVIDIA Container Toolkit's CDI refresh units (not with --omit nvidia-ctk)")
    install.add_argument("--fabricmanager", action="store_true",
                         help="install the Fabric Manager package (nv-fabricmanager, its unit and config)")
    install.add_argument("--fabricmanager-version", default=None, metavar="VERSION",
                         help="the package's version (implies --fabricmanager; default: the driver's)")
    tree = commands.add_parser("sysfs", help="write a fake sysfs tree for a profile")
    tree.add_argument("--profile", required=True)
    tree.add_argument("--out", required=True)
    faults = commands.add_parser("sysfs-faults", help="set the GPUDirect faults of a tree 'sysfs' wrote, in place")
    faults.add_argument("--profile", required=True)
    faults.add_argument("--out", required=True)
    faults.add_argument("--faults", default="{}", help='JSON, e.g. {"acs_redirect": ["0"]}; {} clears them')
    reboot = commands.add_parser("reboot", help="apply what a host reboot does to the GPUs")
    reboot.add_argument("--state", default=None)
    reboot.add_argument("--boot", action="store_true", help="a node boot: recorded daemons, holders and processes are gone too")
    reboot.add_argument("--root", default=None,
                        help="with --boot, the node's root: its /dev gets the GPU device nodes again, as the driver makes them")
    fresh = commands.add_parser("new-state", help="write a fresh state file for a profile")
    fresh.add_argument("--profile", required=True)
    fresh.add_argument("--out", required=True)
    commands.add_parser("profiles", help="list the known profiles")
    return parser


def main(argv):
    if argv[:1] == ["exec"]:
        if len(argv) < 2 or argv[1] not in cli.TOOLS:
            sys.stderr.write("usage: python3 -m gpuemu exec {%s} [ARGS...]\n" % ",".join(cli.TOOLS))
            return 2
        return cli.main(argv[1], argv[2:])
    args = _parser().parse_args(argv)
    if args.command == "install":
        changed = installer.install(args.profile, args.root, args.state, args.omit, unit=args.persistenced_unit,
                                    cdi_refresh_units=args.cdi_refresh_units, fabric_manager=args.fabricmanager,
                                    fabric_manager_version=args.fabricmanager_version)
        for path in changed:
            print("changed: %s" % path)
        if not changed:
            print("ok: nothing to change")
    elif args.command == "sysfs":
        print(sysfs.generate(args.profile, args.out))
    elif args.command == "sysfs-faults":
        print(sysfs.set_faults(args.profile, args.out, json.loads(args.faults)))
    elif args.command == "reboot":
        with state_file.editing(state_file.path_from_env(args.state)) as state:
            state_file.reboot(state, boot=args.boot)
        if args.boot and args.root:
            installer.device_nodes(args.root, state)
    elif args.command == "new-state":
        state_file.write(state_file.new(args.profile), args.out)
    else:
        print("\n".join(catalog.profile_names()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
