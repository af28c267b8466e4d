"""SAMA through VLMEvalKit as its users run it: an image dataset and a video dataset answered with the
scripted planner through VLMEvalKit's own runner, and the wrapper on the repository layout (a clone
with run.py at its root and no vlmeval/run.py), never needing the PyPI build's runner functions."""
from __future__ import annotations

import ast
import base64
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("vlmeval", reason="VLMEvalKit (ms-vlmeval) is not installed")

ROOT = Path(__file__).resolve().parents[1]
COLOURS = {"red": (220, 30, 30), "green": (30, 200, 40), "blue": (30, 40, 220)}


def _png_b64(rgb) -> str:
    from PIL import Image

    img = np.zeros((64, 64, 3), np.uint8)
    img[:] = (90, 90, 90)
    img[16:48, 16:48] = rgb
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


@pytest.fixture()
def lmu(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "LMUData"
    d.mkdir()
    monkeypatch.setenv("LMUData", str(d))
    monkeypatch.setenv("SAMA_CACHE_DIR", str(tmp_path / "sama-cache"))
    return d


def test_model_classes_are_vlmevals():
    from vlmeval.api.base import BaseAPI
    from vlmeval.vlm.base import BaseModel

    from sama_model.adapters.vlmeval_model import (
        HAVE_VLMEVAL,
        SAMAVLMEval,
        SAMAVLMEvalAPI,
    )

    assert HAVE_VLMEVAL and issubclass(SAMAVLMEval, BaseModel) and issubclass(SAMAVLMEvalAPI, BaseAPI)
    assert SAMAVLMEval.is_api is False and SAMAVLMEvalAPI.is_api is True


@pytest.mark.slow
def test_sama_answers_an_image_dataset_through_vlmeval(lmu, tmp_path):
    """A custom image MCQ dataset (VLMEvalKit's documented way to add one: a TSV in LMUData): VLMEvalKit
    dumps each image through ``set_dump_image``, SAMA reads it as a still clip and answers."""
    import pandas as pd

    from mvx_tasks.vlmeval.launch import run_vlmeval

    rows = [{"index": i, "image": _png_b64(rgb), "question": "What colour is the square in the middle of the image?",
             "A": "red", "B": "green", "C": "blue", "answer": "ABC"[i]} for i, rgb in enumerate(COLOURS.values())]
    pd.DataFrame(rows).to_csv(lmu / "MVXTestColours.tsv", sep="\t", index=False)
    work = tmp_path / "work"
    rc = run_vlmeval(["MVXTestColours"], ["SAMA_offline"], work, extra_args=["--judge", "exact_matching"])
    assert rc == 0
    preds = sorted((work / "SAMA_offline").rglob("SAMA_offline_MVXTestColours.xlsx"))
    assert preds, sorted(p.name for p in work.rglob("*"))
    data = pd.read_excel(preds[-1])
    assert len(data) == 3 and all(str(p).startswith("Answer: ") and str(p)[8:9] in "ABC" for p in data["prediction"])
    traces = sorted((work / "sama_traces").rglob("*.json"))
    assert len(traces) == 3
    for t in traces:
        trace = json.loads(t.read_text())
        assert trace["status"] == "finished", trace.get("failure")
        (video,) = trace["question"]["videos"]  # the image, as a still clip SAMA's tools read
        assert video["label"] == "Image 1" and Path(video["path"]).name.startswith("still-")
        assert trace["question"]["options"] == {"A": "red", "B": "green", "C": "blue"}


@pytest.mark.slow
def test_sama_answers_a_video_dataset_through_vlmeval(lmu, tmp_path):
    from mvx_tasks.synth import generate
    from mvx_tasks.vlmeval.launch import run_vlmeval

    data = generate(tmp_path / "synth", per_task=2, seed=5, tasks=["CNT", "SEQ"], progress=False, workers=1)
    work = tmp_path / "work"
    rc = run_vlmeval(["MVX_Synth_8frame"], ["SAMA_offline"], work, data_root=data)
    assert rc == 0
    (records,) = sorted(work.rglob("SAMA_offline_MVX_Synth_8frame_mvx_records.jsonl"))
    recs = [json.loads(x) for x in records.read_text().splitlines()]
    assert sorted(r["id"] for r in recs) == sorted(f"synth-{c}-{i:04d}" for c in ("cnt", "seq") for i in range(2))
    assert all(r["parsed"] and r["agent_failed"] is None and r["failed"] is None for r in recs)
    traces = [json.loads(t.read_text()) for t in (work / "sama_traces").rglob("*.json")]
    # VLMEvalKit handed SAMA the videos themselves (VIDEO_LLM), each under its label
    assert len(traces) == 4 and all(len(t["question"]["videos"]) >= 3 for t in traces)
    assert all(v["path"].endswith(".mp4") and not Path(v["path"]).name.startswith("still-")
               for t in traces for v in t["question"]["videos"])


def test_the_wrapper_uses_no_pypi_only_runner_function():
    """The wrapper runs VLMEvalKit's run.py as a script (``main()`` under ``__main__``, in both layouts);
    it never imports ``vlmeval.run`` nor calls ``run_task`` / ``parse_args`` (the PyPI module's API)."""
    source = (ROOT / "mvx_tasks" / "vlmeval" / "launch.py").read_text()
    tree = ast.parse(source)
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names} | \
               {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | \
               {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert not {"vlmeval.run", "run"} & imported, imported
    assert not {"run_task", "parse_args", "run_local_mode"} & attrs


@pytest.mark.slow
def test_the_wrapper_runs_the_repository_layout(tmp_path):
    """A clone's layout, made from the installed build: ``vlmeval/`` without ``run.py`` and, at the
    root, a ``run.py`` without ``run_task``; first on the import path, as ``pip install -e .`` leaves it.
    The layout check (benchmarks/vlmeval_layouts.py) answers MVX-Synth with SAMA there."""
    import vlmeval

    installed = Path(vlmeval.__file__).parent
    clone = tmp_path / "VLMEvalKit"
    shutil.copytree(installed, clone / "vlmeval", ignore=shutil.ignore_patterns("run.py", "__main__.py",
                                                                                  "__pycache__"))
    runner = (installed / "run.py").read_text()
    assert "def run_task(" in runner  # the PyPI build's extra entry point ...
    (clone / "run.py").write_text(runner.replace("def run_task(", "def _pypi_only_run_task_removed("))  # ... gone
    out = tmp_path / "layouts.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "vlmeval_layouts.py"), "--source", str(clone),
                           "--layouts", "repository", "--json", str(out)],
                          capture_output=True, text=True, timeout=1200, check=False)
    assert out.is_file(), (proc.stdout + proc.stderr)[-3000:]
    rows = {r["check"]: r for r in json.loads(out.read_text())}
    assert all(r["ok"] for r in rows.values()), rows
    assert rows["runner"]["detail"] == "repository: VLMEvalKit/run.py"
    assert proc.returncode == 0


def test_limit_goes_only_to_a_runner_that_declares_it(tmp_path):
    from mvx_tasks.vlmeval.launch import Runner, find_runner, runner_argv

    pypi = find_runner()
    assert pypi.layout == "pypi" and {"--limit", "--judge", "--api-nproc"} <= pypi.options
    assert runner_argv(pypi, ["MVX_Synth"], ["SAMA"], "w", "all", 2, ["--judge", "exact_matching"]) == [
        "--data", "MVX_Synth", "--model", "SAMA", "--work-dir", "w", "--mode", "all", "--limit", "2",
        "--judge", "exact_matching"]
    clone = tmp_path / "run.py"  # the repository's runner declares no --limit
    clone.write_text("parser.add_argument('--data', type=str, nargs='+')\nparser.add_argument(\"--judge\")\n")
    repo = Runner(clone, "repository")
    assert repo.options == {"--data", "--judge"}
    assert "--limit" not in runner_argv(repo, ["MVX_Synth"], ["SAMA"], "w", "all", 2, [])
