"""``mvx-bench install-extras models|vlmeval``: the extras whose package cannot be a plain dependency.

ultralytics (the paper profile's YOLO tracker) and ms-vlmeval (VLMEvalKit) both list the non-headless
``opencv-python`` among their dependencies; installed beside this package's ``opencv-python-headless``
it writes a second ``cv2`` over the first, one that needs the desktop's libGL and breaks ``import cv2``
on a server. So each extra in setup.cfg lists what its package needs at run time, and this command
installs that list (read from the installed package's own metadata) and then the package itself with
``--no-deps``. Arguments after ``--`` go to both pip calls (e.g. ``-c constraints.txt``).
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from importlib import metadata

DIST = "mvx-sama"
#: per extra: the packages installed without their dependency list, and the module that proves it works
NO_DEPS = {
    "models": (["ultralytics>=8.4,<8.5"], "ultralytics"),
    "vlmeval": (["ms-vlmeval>=0.0.20,<0.0.21"], "vlmeval"),
}
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def extra_requirements(extra: str, dist: str = DIST) -> list[str]:
    """The requirements the installed distribution declares for ``extra`` (markers dropped)."""
    out = []
    for req in metadata.requires(dist) or []:
        spec, _, marker = req.partition(";")
        if any(m == extra for m in _EXTRA.findall(marker)):
            out.append(spec.strip())
    return out


def pip_commands(extras: list[str], pip_args: list[str]) -> list[list[str]]:
    """The two pip calls: each extra's declared requirements, then its no-deps packages."""
    unknown = sorted(set(extras) - set(NO_DEPS))
    if unknown:
        raise ValueError(f"no such extra {unknown}; choose from {sorted(NO_DEPS)}")
    reqs = [r for e in extras for r in extra_requirements(e)]
    no_deps = [p for e in extras for p in NO_DEPS[e][0]]
    pip = [sys.executable, "-m", "pip", "install"]
    return [pip + reqs + pip_args, pip + ["--no-deps"] + no_deps + pip_args]


def add_install_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("extras", nargs="+", choices=sorted(NO_DEPS), help="which extras to install")
    s.add_argument("--print", action="store_true", help="only print the pip commands")
    s.epilog = "Arguments after -- go to pip (e.g. -- -c constraints.txt, or -- --dry-run --report FILE)."


def cmd_install_extras(args: argparse.Namespace) -> int:
    extras = list(dict.fromkeys(args.extras))
    cmds = pip_commands(extras, list(getattr(args, "extra", None) or []))
    for cmd in cmds:
        print(shlex.join(cmd), flush=True)
        if not args.print and subprocess.run(cmd).returncode != 0:
            print(f"error: pip failed: {shlex.join(cmd)}", file=sys.stderr)
            return 1
    if args.print or "--dry-run" in cmds[0]:
        return 0
    failed = []
    for e in extras:
        module = NO_DEPS[e][1]
        proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True,
                              env={**os.environ, "YOLO_OFFLINE": "1"})  # else ultralytics probes the network
        print(f"{e}: import {module} {'ok' if proc.returncode == 0 else 'FAILED'}")
        if proc.returncode:
            failed.append(f"{module}: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else '?'}")
    for f in failed:
        print(f"error: {f}", file=sys.stderr)
    return 1 if failed else 0
