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
    configs = [f for f in _source_files() if f.startswith("harness_configs/") and f.endswith(".yaml")]
    assert "harness_configs/peers/sama_offline_peers.yaml" in configs  # shipped as the package mvx_tasks.configs
    assert [f for f in configs if f.replace("harness_configs/", "mvx_tasks/configs/", 1) not in names] == []
    assert {"mvx_tasks/leaderboard/paper_table1.csv", "mvx_tasks/configs/__init__.py"} <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> dict:
    """The wheel installed into a folder of its own, and an environment that runs it from elsewhere."""
    from mvx_tasks.synth import generate

    root = tmp_path_factory.mktemp("installed")
    target = root / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                           str(wheel)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = generate(root / "data", per_task=1, seed=3, tasks=["SPR"], progress=False, workers=1)
    work = root / "elsewhere"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target), "MVX_BENCH_DATA": str(data), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    return {"target": target, "work": work, "env": env}


def _mvx(installed: dict, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mvx_tasks.cli", *args], cwd=installed["work"], env=installed["env"],
                          capture_output=True, text=True, timeout=timeout)


def test_installed_wheel_is_the_copy_that_runs(installed):
    where = subprocess.run([sys.executable, "-c", "import mvx_tasks, mvx_tasks.configs, sama_model.profiles as p; "
                            "print(mvx_tasks.__file__); print(mvx_tasks.configs.__file__); print(p.PROFILE_FILE)"],
                           cwd=installed["work"], env=installed["env"], capture_output=True, text=True, check=True)
    assert all(Path(w).is_relative_to(installed["target"]) for w in where.stdout.split()), where.stdout


def test_installed_wheel_runs_every_config_leaderboard_and_a_route(installed):
    shipped = installed["target"] / "mvx_tasks" / "configs"
    proc = _mvx(installed, "configs-path")
    assert proc.stdout.strip() == str(shipped)
    proc = _mvx(installed, "run", str(shipped), str(shipped / "peers"), "--dry-run")
    assert proc.returncode == 0, proc.stderr[-2000:]
    headers = [x for x in proc.stdout.splitlines() if x.startswith("# ")]
    assert len(headers) == len(list(shipped.glob("*.yaml"))) + len(list((shipped / "peers").glob("*.yaml")))
    assert proc.stdout.count(f"--include_path {installed['target'] / 'mvx_tasks' / 'tasks'}") == len(headers)

    proc = _mvx(installed, "leaderboard", "--out", "board")
    assert proc.returncode == 0, proc.stderr[-2000:]
    board = (installed["work"] / "board" / "leaderboard.md").read_text()
    assert "Qwen2.5-VL-7B" in board and "GPT-4o" in board  # the paper's rows, read from the installed table

    proc = _mvx(installed, "routes", "qwen2_5_vl_7b", "--work", "routes", "--json", "routes.json")
    report = installed["work"] / "routes.json"
    assert report.is_file(), (proc.stdout + proc.stderr)[-3000:]
    (route,) = json.loads(report.read_text())
    assert route["verified"] and route["ran"], route
    assert proc.returncode == 0, proc.stdout[-2000:]


def test_installed_wheel_answers_mvx_bench_through_lmms_eval_outside_the_repo(installed):
    work = installed["work"]
    cmd = [sys.executable, "-m", "lmms_eval", "--model", "sama",
           "--model_args", f"profile=offline,cache_dir=none,trace_dir={work / 'traces'}",
           "--tasks", "mvx_bench_spr", "--batch_size", "1", "--output_path", str(work / "out"), "--log_samples"]
    proc = subprocess.run(cmd, cwd=work, env=installed["env"], capture_output=True, text=True, timeout=600)
    found = list((work / "out").rglob("*_results.json"))
    assert found, (proc.stdout + proc.stderr)[-4000:]
    res = json.loads(found[0].read_text())["results"]["mvx_bench_spr"]
    assert res["mvx_failed,none"] == 0 and res["mvx_unparsed,none"] == 0
    (trace,) = (work / "traces").glob("*.json")
    t = json.loads(trace.read_text())
    assert t["status"] == "finished" and t["output"].startswith("Answer: ")
    assert t["config"]["profile"] == "offline"  # read from the installed profiles.yaml
