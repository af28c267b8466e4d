"""The ordinary install: build the wheel, install it outside the source tree, and answer a question
through ``lmms-eval --model sama`` from a folder that is not the repository."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


def _source_files() -> list[str]:
    """Tracked and untracked-but-not-ignored files: what a fresh clone (plus this change) holds."""
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs a git checkout to know which files are the project's")
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    return [f for f in out.splitlines() if (REPO / f).is_file()]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    files = _source_files()
    for f in files:
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, src / f)
    dist = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
                           "-q", "-w", str(dist)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (whl,) = dist.glob("mvx_sama-*.whl")
    return whl


def test_wheel_holds_every_data_file_the_packages_open(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    data = [f for f in _source_files() if f.startswith(("mvx_tasks/", "sama_model/")) and not f.endswith(".py")]
    assert "sama_model/profiles.yaml" in data
    assert [f for f in data if f not in names] == []


def test_installed_wheel_answers_through_lmms_eval_outside_the_repo(wheel, tmp_path):
    from mvx_tasks.synth import generate

    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                           str(wheel)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = generate(tmp_path / "data", per_task=1, seed=3, tasks=["SPR"], progress=False, workers=1)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target), "MVX_SYNTH_DATA": str(data), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    where = subprocess.run([sys.executable, "-c", "import mvx_tasks, sama_model.profiles as p; "
                            "print(mvx_tasks.__file__); print(p.PROFILE_FILE)"],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert all(Path(w).is_relative_to(target) for w in where), where  # the installed copy, not the source
    cmd = [sys.executable, "-m", "lmms_eval", "--model", "sama",
           "--model_args", f"profile=offline,cache_dir=none,trace_dir={work / 'traces'}",
           "--tasks", "mvx_synth_spr", "--batch_size", "1", "--output_path", str(work / "out"), "--log_samples"]
    proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    found = list((work / "out").rglob("*_results.json"))
    assert found, (proc.stdout + proc.stderr)[-4000:]
    res = json.loads(found[0].read_text())["results"]["mvx_synth_spr"]
    assert res["mvx_failed,none"] == 0 and res["mvx_unparsed,none"] == 0
    (trace,) = (work / "traces").glob("*.json")
    t = json.loads(trace.read_text())
    assert t["status"] == "finished" and t["output"].startswith("Answer: ")
    assert t["config"]["profile"] == "offline"  # read from the installed profiles.yaml
