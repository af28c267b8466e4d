"""`mvx-bench vlmeval` against both ways VLMEvalKit is installed, checked end to end.

* **pypi**: the installed PyPI build (``ms-vlmeval``), runner at ``vlmeval/run.py``;
* **repository**: a source snapshot of open-compass/VLMEvalKit laid out as ``pip install -e .``
  leaves a clone: the ``vlmeval`` package and ``run.py`` side by side, that folder first on the
  import path (``PYTHONPATH``; an editable install resolves ``import vlmeval`` to the same folder),
  and no ``vlmeval/run.py``. The snapshot comes from a git clone or a bare git dir (``git archive
  HEAD``), or is a plain folder given with ``--source``; nothing of it is copied into this project.

Each layout runs in its own subprocess (fresh imports), on a tiny MVX-Synth set generated on the
spot (CNT and SEQ, two questions each, ``--limit 1`` per task), with ``SAMA_offline`` (the scripted planner, offline tools):

0. ``imports``: the snapshot's ``vlmeval`` imports; a module its dependencies need and this
   environment lacks is installed, without its own dependencies, into a throwaway folder on the
   snapshot's import path (what ``pip install -e .`` would have installed), one at a time;
1. ``runner``: :func:`mvx_tasks.vlmeval.launch.find_runner` picks that layout's ``run.py``;
2. ``registered``: the datasets and SAMA land in the layout's tables (``DATASET_CLASSES``,
   ``supported_video_datasets``, ``supported_VLM``);
3. ``answered``: ``run_vlmeval`` returns 0 and the MVX records file holds every question, each
   with a parsed letter and no agent failure;
4. ``no_pypi_runner``: on the repository layout, ``vlmeval.run`` (and so its ``run_task``) is not
   importable and was never imported.

    python benchmarks/vlmeval_layouts.py --repo /path/to/VLMEvalKit [--out results/vlmeval_layouts.md]
    python benchmarks/vlmeval_layouts.py --source /path/to/checkout --layouts repository --json out.json

Exit status 0 when every check of every layout passed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHECKS = ("imports", "runner", "registered", "answered", "no_pypi_runner")
#: import name -> distribution, where they differ (for the modules a snapshot may lack)
DISTRIBUTIONS = {"absl": "absl-py", "cv2": "opencv-python-headless", "sklearn": "scikit-learn",
                 "skimage": "scikit-image", "dotenv": "python-dotenv", "Levenshtein": "levenshtein",
                 "clip": "openai-clip", "Polygon": "polygon3", "yaml": "pyyaml", "PIL": "pillow"}


def snapshot(repo: Path, dest: Path) -> tuple[Path, str]:
    """``git archive HEAD`` of a clone or a bare git dir into ``dest``; returns (folder, commit)."""
    git = ["git", f"--git-dir={repo}"] if (repo / "objects").is_dir() and (repo / "HEAD").is_file() \
        else ["git", "-C", str(repo)]
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    archive = dest / "snapshot.tar"
    with archive.open("wb") as fh:
        subprocess.run([*git, "archive", "--format=tar", "HEAD"], stdout=fh, check=True)
    folder = dest / "VLMEvalKit"
    folder.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    archive.unlink()
    return folder, commit


def child(layout: str, data: Path, work: Path) -> dict:
    """The checks, run inside the layout's interpreter environment; one dict per check."""
    import importlib.util

    out: dict[str, dict] = {}
    from mvx_tasks.vlmeval.launch import find_runner, run_vlmeval

    runner = find_runner()
    import vlmeval

    pkg = Path(vlmeval.__file__).parent
    where = pkg.parent.parent  # site-packages/vlmeval/run.py, or VLMEvalKit/run.py
    out["runner"] = {"ok": runner.layout == layout, "detail": f"{runner.layout}: {runner.script.relative_to(where)}"}
    t0 = time.time()
    rc = run_vlmeval(["MVX_Synth_8frame"], ["SAMA_offline"], work, limit=1, data_root=data)
    seconds = time.time() - t0
    import vlmeval.dataset as vd
    from vlmeval.config import supported_VLM
    from vlmeval.dataset.video_dataset_config import supported_video_datasets

    from mvx_tasks.vlmeval.dataset import MVXVideoMCQ

    reg = MVXVideoMCQ in vd.DATASET_CLASSES and "MVX_Synth_8frame" in supported_video_datasets \
        and "SAMA_offline" in supported_VLM
    out["registered"] = {"ok": bool(reg), "detail": f"MVX datasets and SAMA in the tables of {pkg.relative_to(where)}"}
    records = sorted(work.rglob("SAMA_offline_MVX_Synth_8frame_mvx_records.jsonl"))
    rows = [json.loads(x) for x in records[-1].read_text().splitlines() if x.strip()] if records else []
    tasks = {json.loads(line)["task"] for line in (data / "data.jsonl").read_text().splitlines() if line.strip()}
    expected = len(tasks)  # limit=1: one question per task
    good = [r for r in rows if r.get("parsed") and not r.get("agent_failed") and not r.get("failed")]
    out["answered"] = {"ok": rc == 0 and len(rows) == expected and len(good) == expected,
                       "detail": f"exit {rc}; {len(good)}/{expected} questions answered with a letter "
                                 f"({sum(bool(r.get('correct')) for r in rows)} right) in {seconds:.0f} s; "
                                 f"records at {records[-1].relative_to(work) if records else 'none'}"}
    if layout == "repository":
        absent = importlib.util.find_spec("vlmeval.run") is None and "vlmeval.run" not in sys.modules
        out["no_pypi_runner"] = {"ok": absent, "detail": "vlmeval.run absent and never imported" if absent
                                 else "vlmeval.run was importable or imported"}
    else:
        out["no_pypi_runner"] = {"ok": True, "detail": "n/a (the PyPI build has vlmeval/run.py)"}
    return out


def complete_imports(env: dict, deps: Path, rounds: int = 20) -> tuple[bool, str]:
    """Import ``vlmeval`` (and its tables) in ``env``; install each missing module with ``pip install
    --no-deps --target deps`` and retry. (ok, what was installed or why it failed)."""
    probe = "import vlmeval, vlmeval.config, vlmeval.dataset, vlmeval.smp"
    installed: list[str] = []
    for _ in range(rounds):
        proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=600,
                              check=False)
        if proc.returncode == 0:
            added = f"installed for the snapshot (--no-deps, throwaway): {', '.join(installed)}" if installed \
                else "nothing to install"
            return True, f"vlmeval imports; {added}"
        missing = re.findall(r"No module named '([^'.]+)", proc.stderr)
        if not missing:
            return False, "import failed: " + proc.stderr[-800:].replace("\n", " / ")
        dist = DISTRIBUTIONS.get(missing[-1], missing[-1].replace("_", "-"))
        if dist in installed:
            return False, f"{dist} was installed but {missing[-1]} still does not import"
        pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(deps), dist],
                             capture_output=True, text=True, timeout=600, check=False)
        if pip.returncode != 0:
            return False, f"{missing[-1]} is missing and `pip install {dist}` failed: {pip.stderr[-300:]}"
        installed.append(dist)
    return False, f"still missing modules after installing {', '.join(installed)}"


def run_layout(layout: str, source: Path | None, data: Path, tmp: Path) -> dict:
    """Run :func:`child` for one layout in a subprocess; (check -> {ok, detail})."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "LMUData": str(tmp / "LMUData"),
           "SAMA_CACHE_DIR": str(tmp / "sama-cache")}
    (tmp / "LMUData").mkdir(exist_ok=True)
    paths = [str(source), str(tmp / "deps")] if layout == "repository" else []
    env["PYTHONPATH"] = os.pathsep.join(paths + [str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    imports_ok, imports = complete_imports(env, tmp / "deps")
    if not imports_ok:
        return {"imports": {"ok": False, "detail": imports},
                **{c: {"ok": False, "detail": "not run: vlmeval does not import"} for c in CHECKS[1:]}}
    result = tmp / f"{layout}.json"
    cmd = [sys.executable, __file__, "--child", layout, "--data", str(data), "--work", str(tmp / f"work-{layout}"),
           "--json", str(result)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800, cwd=str(tmp), check=False)
    if not result.is_file():
        tail = (proc.stdout + proc.stderr)[-1500:].replace("\n", " / ")
        return {"imports": {"ok": True, "detail": imports},
                "runner": {"ok": False, "detail": f"the checks did not finish (exit {proc.returncode}): {tail}"},
                **{c: {"ok": False, "detail": "not run"} for c in CHECKS[2:]}}
    return {"imports": {"ok": True, "detail": imports}, **json.loads(result.read_text())}


def table(rows: list[tuple[str, str, str, dict]]) -> str:
    lines = ["| layout | VLMEvalKit | check | status | detail |", "|---|---|---|---|---|"]
    for layout, where, check, res in rows:
        detail = str(res["detail"]).replace("|", "/")
        lines.append(f"| {layout} | {where} | {check} | {'ok' if res['ok'] else 'FAIL'} | {detail} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, help="a clone or bare git dir of open-compass/VLMEvalKit (HEAD is used)")
    ap.add_argument("--source", type=Path, help="a VLMEvalKit checkout folder (vlmeval/ and run.py) used as it is")
    ap.add_argument("--layouts", default="pypi,repository")
    ap.add_argument("--out", type=Path, help="write the Markdown table here")
    ap.add_argument("--json", type=Path, help="write the results as JSON here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        res = child(args.child, args.data, args.work)
        args.json.write_text(json.dumps(res))
        return 0

    layouts = [x.strip() for x in args.layouts.split(",") if x.strip()]
    if "repository" in layouts and not (args.repo or args.source):
        ap.error("the repository layout needs --repo (a clone or bare git dir) or --source (a checkout folder)")
    from importlib.metadata import PackageNotFoundError, version

    from mvx_tasks.synth import generate

    rows = []
    with tempfile.TemporaryDirectory(prefix="vlmeval-layouts-") as t:
        tmp = Path(t)
        data = generate(tmp / "synth", per_task=2, seed=3, tasks=["CNT", "SEQ"], progress=False, workers=1)
        source, where = args.source, "source folder"
        if "repository" in layouts and args.repo:
            source, commit = snapshot(args.repo.resolve(), tmp)
            where = f"open-compass/VLMEvalKit@{commit[:12]}"
        elif source is not None:
            source = source.resolve()
        for layout in layouts:
            if layout == "pypi":
                try:
                    label = f"ms-vlmeval {version('ms-vlmeval')}"
                except PackageNotFoundError:
                    label = "ms-vlmeval (not installed)"
            else:
                label = where
            sub = tmp / layout
            sub.mkdir()
            res = run_layout(layout, source, data, sub)
            rows += [(layout, label, c, res[c]) for c in CHECKS if c in res]
            print(table([r for r in rows if r[0] == layout]), flush=True)
    text = table(rows)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        title = (f"# mvx-bench vlmeval on both VLMEvalKit layouts ({time.strftime('%Y-%m-%d')}, "
                 f"`python benchmarks/vlmeval_layouts.py`; SAMA_offline on MVX_Synth_8frame, --limit 1 per task)")
        args.out.write_text(f"{title}\n\n{text}\n")
    if args.json:
        args.json.write_text(json.dumps([{"layout": a, "vlmeval": b, "check": c, **r} for a, b, c, r in rows]))
    return 0 if rows and all(r[3]["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
