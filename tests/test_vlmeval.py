"""MVX datasets in VLMEvalKit: registration, labelled prompts, rule scoring, and an end-to-end run
through VLMEvalKit's own runner with a stand-in model that answers from the pixels it receives."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("vlmeval", reason="VLMEvalKit (ms-vlmeval) is not installed")

from vlmeval.vlm.base import BaseModel  # noqa: E402

from mvx_tasks.leaderboard.runs import find_vlmeval_runs  # noqa: E402
from mvx_tasks.leaderboard.table import build_leaderboard  # noqa: E402
from mvx_tasks.vlmeval.names import base_name, dataset_names, frames_of  # noqa: E402

COLOURS = {"red": (220, 30, 30), "green": (30, 200, 40), "blue": (30, 40, 220), "yellow": (230, 220, 30)}
# (id, task, reference colour, candidate colours A-D, answer). The colour rule picks the candidate
# whose colour equals the reference's: right on the first three, wrong on the last (its key says D).
QUESTIONS = [
    ("am-1", "AM", "red", ["blue", "red", "green", "yellow"], "B"),
    ("am-2", "AM", "green", ["green", "blue", "red", "yellow"], "A"),
    ("vs-1", "VS", "blue", ["red", "green", "blue", "yellow"], "C"),
    ("vs-2", "VS", "yellow", ["yellow", "red", "green", "blue"], "D"),
]


def _write_video(path: Path, rgb: tuple[int, int, int], n: int = 10) -> None:
    import av

    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=10)
        stream.width = stream.height = 32
        stream.pix_fmt = "yuv420p"
        frame = np.zeros((32, 32, 3), dtype=np.uint8)
        frame[:] = rgb
        for _ in range(n):
            out.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        out.mux(stream.encode())


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mvx_fixture")
    (root / "videos").mkdir()
    for name, rgb in COLOURS.items():
        _write_video(root / "videos" / f"{name}.mp4", rgb)
    with (root / "data.jsonl").open("w") as fh:
        for qid, task, ref, cands, answer in QUESTIONS:
            labels = ["Video A", "Video B", "Video C", "Video D"]
            videos = [{"label": "Reference", "path": f"videos/{ref}.mp4"}]
            videos += [{"label": lab, "path": f"videos/{c}.mp4"} for lab, c in zip(labels, cands)]
            fh.write(json.dumps({"id": qid, "task": task, "question": "Which candidate matches the reference?",
                                 "options": dict(zip("ABCD", labels)), "answer": answer, "videos": videos}) + "\n")
    return root


@pytest.fixture()
def lmu(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "LMUData"
    d.mkdir()
    monkeypatch.setenv("LMUData", str(d))
    return d


class ColourMatcher(BaseModel):
    """Test-only model: reads the images it gets (all images first, like adapters that reorder),
    maps them to videos with the prompt's image-number listing, and picks the candidate whose
    mean colour is nearest the reference's. It never sees the answer."""

    INTERLEAVE = True
    VIDEO_LLM = False

    def __init__(self, **kwargs):
        super().__init__()

    def generate_inner(self, message, dataset=None) -> str:
        images = [m["value"] for m in message if m["type"] == "image"]
        text = [m["value"] for m in message if m["type"] == "text"][-1]
        spans = {label.strip(): (int(a), int(b or a)) for a, b, label in
                 re.findall(r"images? (\d+)(?:-(\d+))? (?:are|is) ([^;.]+)", text)}
        mean = {label: np.mean([np.asarray(Image.open(images[i - 1]), dtype=float).mean(axis=(0, 1))
                                for i in range(a, b + 1)], axis=0) for label, (a, b) in spans.items()}
        ref = mean.pop("Reference")
        best = min(mean, key=lambda label: float(np.linalg.norm(mean[label] - ref)))
        letter = re.search(rf"^([A-D])\. {re.escape(best)}$", text, re.MULTILINE).group(1)
        return f"Comparing colours, the answer is {letter}."


def test_names_and_variants():
    assert dataset_names()[:8] == ["MVX_Bench", "MVX_Bench_8frame", "MVX_Bench_16frame", "MVX_Bench_32frame",
                                   "MVX_Synth", "MVX_Synth_8frame", "MVX_Synth_16frame", "MVX_Synth_32frame"]
    assert {"CVBench_MV", "MVU_Eval_MV_16frame", "CrossVid_MV_8frame"} <= set(dataset_names())  # the peers
    assert [frames_of(n) for n in ("MVX_Bench", "MVX_Synth_16frame", "MVX_Bench_8frame")] == [8, 16, 8]
    assert base_name("MVX_Synth_16frame") == "MVX_Synth"
    with pytest.raises(KeyError):
        base_name("Video-MME_8frame")


def test_registration_mutates_vlmeval_tables():
    import vlmeval.dataset as vd
    from vlmeval.dataset.video_dataset_config import supported_video_datasets

    from mvx_tasks.vlmeval import register
    from mvx_tasks.vlmeval.dataset import MVXVideoMCQ

    register()
    register()  # idempotent
    assert vd.DATASET_CLASSES.count(MVXVideoMCQ) == 1
    assert vd.DATASET_TYPE("MVX_Bench_16frame") == "Video-MCQ"
    assert vd.DATASET_MODALITY("MVX_Synth_8frame") == "VIDEO"
    assert supported_video_datasets["MVX_Synth_16frame"].keywords == {"dataset": "MVX_Synth_16frame", "nframe": 16}
    from vlmeval.config import supported_VLM

    from mvx_tasks.vlmeval.register import SAMA_PATH, sama_available

    assert sama_available()  # the SAMA adapter is in this tree: registered lazily by class path
    assert supported_VLM["SAMA_offline"].args == (SAMA_PATH,)
    assert supported_VLM["SAMA_offline"].keywords == {"profile": "offline"}


def test_prompt_labels_survive_reordering(dataset_dir, lmu, monkeypatch):
    from mvx_tasks.vlmeval.dataset import MVXVideoMCQ

    monkeypatch.setenv("MVX_BENCH_DATA", str(dataset_dir))
    ds = MVXVideoMCQ(dataset="MVX_Bench_8frame", nframe=8, model="ignored", mode="all")  # runner kwargs pass through
    assert len(ds) == 4
    msg = ds.build_prompt(0)
    kinds = [m["type"] for m in msg]
    assert kinds == (["text"] + ["image"] * 8) * 5 + ["text"]
    assert [msg[i]["value"] for i in range(0, 45, 9)] == ["Reference:", "Video A:", "Video B:", "Video C:", "Video D:"]
    assert "images 1-8 are Reference; images 9-16 are Video A; images 17-24 are Video B; " \
           "images 25-32 are Video C; images 33-40 are Video D." in msg[-1]["value"]
    assert "B. Video B" in msg[-1]["value"] and "answer" not in json.dumps([m["value"] for m in msg[:-1]])
    first = np.asarray(Image.open(msg[1]["value"]), dtype=float).mean(axis=(0, 1))
    assert np.allclose(first, COLOURS["red"], atol=12)  # the Reference's frames really are its frames
    vids = ds.build_prompt(0, video_llm=True)
    assert [m["type"] for m in vids] == ["text", "video"] * 5 + ["text"]
    assert vids[1]["value"] == str(dataset_dir.resolve() / "videos" / "red.mp4")
    limited = MVXVideoMCQ(dataset="MVX_Bench", limit=1)
    assert list(limited.data["id"]) == ["am-1", "vs-1"]


def test_missing_folder_says_what_to_set(lmu, monkeypatch):
    from mvx_tasks.data import DataSourceError
    from mvx_tasks.vlmeval.dataset import MVXVideoMCQ

    monkeypatch.delenv("MVX_SYNTH_DATA", raising=False)
    with pytest.raises(DataSourceError, match="MVX_SYNTH_DATA"):
        MVXVideoMCQ(dataset="MVX_Synth_8frame")


def test_end_to_end_through_vlmeval_runner(dataset_dir, lmu, tmp_path):
    from mvx_tasks.vlmeval.launch import run_vlmeval
    from mvx_tasks.vlmeval.register import register_model

    register_model("MVXColourMatcher", ColourMatcher)
    work = tmp_path / "work"
    rc = run_vlmeval(["MVX_Bench_8frame"], ["MVXColourMatcher"], work, data_root=dataset_dir)
    assert rc == 0
    out = work / "MVXColourMatcher"
    lines = (out / "MVXColourMatcher_MVX_Bench_8frame_mvx_records.jsonl").read_text().splitlines()
    records = [json.loads(x) for x in lines]
    assert [(r["id"], r["parsed"], r["correct"]) for r in records] == [
        ("am-1", "B", True), ("am-2", "A", True), ("vs-1", "C", True), ("vs-2", "A", False)]
    status = json.loads((out / "status.json").read_text())
    metrics = status["datasets"]["MVX_Bench_8frame"]["metrics"]
    assert metrics["Overall"] == 75.0 and metrics["AM"] == 100.0 and metrics["VS"] == 50.0
    assert metrics["Matching"] == 75.0

    runs = find_vlmeval_runs([work])
    assert [(r.model, r.benchmark, len(r.records)) for r in runs] == [("MVXColourMatcher", "MVX-Bench", 4)]
    board = build_leaderboard(vlmeval=[work], n_boot=200)
    (entry,) = board.runs()
    assert (entry.name, entry.source, entry.avg, entry.answered, entry.unparsed) == \
           ("MVXColourMatcher (MVX_Bench_8frame)", "vlmeval", 75.0, 4, 0)
    assert entry.partial and entry.per_task == {"AM": 100.0, "VS": 50.0}
    assert entry.paper_row is None and entry.delta == {}
