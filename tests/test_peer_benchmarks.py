"""Peer multi-video benchmarks (CVBench, MVU-Eval, CrossVid) through the MVX path: fixtures in each
benchmark's own published schema (generated tiny videos), the real loaders, verify, the generated
task YAMLs, SAMA's label parsing, the VLMEvalKit dataset, the leaderboard; and (slow) the real
lmms-eval CLI with SAMA (offline profile) and a tiny Qwen2.5-VL whose processor is spied on."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fixtures import write_video
from mvx_tasks.benchmarks import CROSSVID, CVBENCH, MVU_EVAL, PEERS, get_benchmark
from mvx_tasks.data_peers import load_benchmark, resolve_benchmark_root
from mvx_tasks.data_verify import verify
from mvx_tasks.schema import SchemaError

SPY = Path(__file__).parent / "processor_spy"
RGB = {"red": (220, 30, 30), "green": (30, 190, 30), "blue": (30, 40, 220), "yellow": (230, 220, 30)}


def _vid(path: Path, colour: str) -> None:
    write_video(path, RGB[colour], n_frames=8, size=64)


def make_cvbench(root: Path) -> Path:
    """The authors' columns (Hokhim2/CVBench lmms-eval fork): id, task_type, video_1..video_4, question,
    options, answer; one 4-video question and one 2-video Yes/No question; as a parquet file."""
    import pandas as pd

    for c in RGB:
        _vid(root / "videos" / f"{c}.mp4", c)
    rows = [
        {"id": "cvb-1", "task_type": "Cross-video Object Recognition", "video_1": "videos/red.mp4",
         "video_2": "videos/green.mp4", "video_3": "videos/blue.mp4", "video_4": "videos/yellow.mp4",
         "question": "Which video shows a blue square?",
         "options": ["A. Video 1.", "B. Video 2.", "C. Video 3.", "D. Video 4."], "answer": "C"},
        {"id": "cvb-2", "task_type": "Cross-video Scene Recognition", "video_1": "videos/red.mp4",
         "video_2": "videos/red.mp4", "video_3": None, "video_4": None,
         "question": "Do both videos show a red square?", "options": ["Yes.", "No."], "answer": "Yes"},
    ]
    # every other sub-task: one 2-video question (a group needs each of its sub-tasks)
    for t in CVBENCH.tasks[1:]:
        if t.code != "CVB_CSR":
            rows.append({"id": f"cvb-{t.code.lower()}", "task_type": t.name, "video_1": "videos/green.mp4",
                         "video_2": "videos/blue.mp4", "video_3": None, "video_4": None,
                         "question": "Which video shows a green square?", "options": ["A. Video 1.", "B. Video 2."],
                         "answer": "A"})
    (root / "data").mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(root / "data" / "test-00000-of-00001.parquet")
    return root


def make_mvu(root: Path) -> Path:
    """VLMEvalKit's MVU-Eval input: one JSON dict keyed by index with video_paths under video/ (the
    archive unpacks flat, so the files sit at the folder's top), options list, ground_truth, task."""
    root.mkdir(parents=True, exist_ok=True)
    for c in ("red", "green", "blue"):
        _vid(root / f"mvu_{c}.mp4", c)
    annos = {
        "0": {"video_paths": ["video/mvu_red.mp4", "video/mvu_green.mp4", "video/mvu_blue.mp4"],
              "question": "How many of the videos show a red square?",
              "options": ["A. 0", "B. 1", "C. 2", "D. 3"], "ground_truth": "B", "task": "Counting"},
        "1": {"video_paths": ["video/mvu_green.mp4", "video/mvu_blue.mp4"],
              "question": "Which video shows a blue square?", "options": ["A. Video 1", "B. Video 2"],
              "ground_truth": "B", "task": "Temporal Reasoning"},
    }
    for i, t in enumerate([t for t in MVU_EVAL.tasks if t.code not in ("MVU_COUNT", "MVU_TR")], 2):
        annos[str(i)] = {"video_paths": ["video/mvu_red.mp4", "video/mvu_green.mp4"], "task": t.name,
                         "question": "Which video shows a red square?", "options": ["A. Video 1", "B. Video 2"],
                         "ground_truth": "A"}
    (root / "MVU_Eval_QAs.json").write_text(json.dumps(annos))
    return root


def make_crossvid(root: Path) -> Path:
    """The authors' release: QA/<TASK>.json lists ({id, videos, question, options, answer}) and videos/."""
    for c in RGB:
        _vid(root / "videos" / "cook" / f"{c}.mp4", c)
    qa = root / "QA"
    qa.mkdir(parents=True, exist_ok=True)
    (qa / "CC.json").write_text(json.dumps([
        {"id": 0, "videos": [f"cook/{c}.mp4" for c in ("red", "green", "blue", "yellow")],
         "question": "Which video shows a yellow square?",
         "options": ["A. Video 1", "B. Video 2", "C. Video 3", "D. Video 4"], "answer": "D"}]))
    (qa / "NC.json").write_text(json.dumps([
        {"id": 0, "videos": ["cook/green.mp4", "cook/red.mp4"], "question": "Which video shows a red square?",
         "options": ["A. Video 1", "B. Video 2"], "answer": "B"}]))
    (qa / "PSS.json").write_text(json.dumps([  # a format the MCQ schema cannot hold: skipped, with the reason
        {"id": 0, "video": "cook/red.mp4", "segments": {"1": [0, 1]}, "answer": "1"}]))
    return root


@pytest.fixture(scope="module")
def peers(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("peers")
    return {"cvbench": make_cvbench(root / "cvbench"), "mvu_eval": make_mvu(root / "mvu"),
            "crossvid": make_crossvid(root / "crossvid")}


# ----------------------------------------------------------------------------- loaders and registry

def test_records_and_registry_entries():
    from mvx_tasks.registry import benchmark_tasks, get_task, tasks_by_level

    assert [bm.name for bm in PEERS] == ["CVBench", "MVU-Eval", "CrossVid"]
    assert (CVBENCH.n_questions, MVU_EVAL.n_questions, CROSSVID.n_questions) == (1000, 1824, 9015)
    assert len(benchmark_tasks("CVBench")) == 15 and len(benchmark_tasks("MVU-Eval")) == 8
    assert [t.code for t in benchmark_tasks("CrossVid")] == ["CXV_CC", "CXV_NC"]
    assert get_task("cvb_cor").benchmark == "CVBench" and get_task("MVU_COUNT").level == "mvu_perception"
    assert [t.code for t in tasks_by_level("perception")] == ["CNT", "FD", "PRB"]  # MVX's levels untouched
    # published per-task counts: CVBench's released file, MVU-Eval's paper; CrossVid publishes none (0)
    assert [t.n_questions for t in MVU_EVAL.tasks] == [126, 179, 227, 135, 281, 164, 339, 373]
    assert sum(t.n_questions for t in CVBENCH.tasks) == 1000 and get_task("CVB_CSR").n_questions == 149
    assert all(t.n_questions == 0 for t in CROSSVID.tasks) and CROSSVID.display_name == "CrossVid CC+NC"
    assert get_benchmark("MVU_Eval_MV") is MVU_EVAL and get_benchmark("cvbench") is CVBENCH


def test_loaders_map_each_published_schema(peers):
    cvb = load_benchmark(CVBENCH, peers["cvbench"])
    assert [(s.id, s.task, s.answer, len(s.videos)) for s in cvb[:2]] == [("cvb-1", "CVB_COR", "C", 4),
                                                                          ("cvb-2", "CVB_CSR", "A", 2)]
    assert len(cvb) == 15 and {s.task for s in cvb} == {t.code for t in CVBENCH.tasks}
    assert [v.label for v in cvb[0].videos] == ["Video 1", "Video 2", "Video 3", "Video 4"]
    assert cvb[0].options == {"A": "Video 1.", "B": "Video 2.", "C": "Video 3.", "D": "Video 4."}
    assert cvb[1].options == {"A": "Yes.", "B": "No."}  # a Yes/No answer is its option's letter
    mvu = load_benchmark(MVU_EVAL, peers["mvu_eval"])
    assert [(s.id, s.task, s.answer) for s in mvu[:2]] == [("mvu-0", "MVU_COUNT", "B"), ("mvu-1", "MVU_TR", "B")]
    assert len(mvu) == 8 and {s.task for s in mvu} == {t.code for t in MVU_EVAL.tasks}
    assert mvu[0].videos[2].path == "mvu_blue.mp4"  # video/ prefix resolved by file name, as VLMEvalKit does
    cxv = load_benchmark(CROSSVID, peers["crossvid"])  # PSS is skipped (not a one-letter MCQ)
    assert [(s.id, s.task, s.answer, len(s.videos)) for s in cxv] == [("cxv-cc-0", "CXV_CC", "D", 4),
                                                                      ("cxv-nc-0", "CXV_NC", "B", 2)]
    assert cxv[0].videos[0].path == "videos/cook/red.mp4"
    # the ;-joined form VLMEvalKit writes to its TSV maps the same way
    row = {"index": 5, "video_paths": "video/a.mp4;video/b.mp4", "question": "q", "options": '["A. x", "B. y"]',
           "ground_truth": "A", "task": "Comparison"}
    m = MVU_EVAL.map_row(row, "tsv[5]")
    assert [v["path"] for v in m["videos"]] == ["video/a.mp4", "video/b.mp4"] and m["task"] == "MVU_COMP"


def test_unmappable_rows_list_columns_found_and_expected():
    with pytest.raises(SchemaError) as e:
        CVBENCH.map_row({"id": "x", "question": "q", "options": ["A. a", "B. b"], "answer": "A",
                         "video_1": "a.mp4"}, "hub row 1")
    msg = str(e.value)
    assert "no value for task_type" in msg and "Columns found: ['answer', 'id', 'options', 'question', 'video_1']" in msg
    assert "Expected: id, task_type, video_1..video_4" in msg
    with pytest.raises(SchemaError, match="unknown task 'Dancing'.*Object Recognition"):
        MVU_EVAL.map_row({"_key": "1", "video_paths": ["a.mp4"], "question": "q", "options": ["A. a"],
                          "ground_truth": "A", "task": "Dancing"}, "json[1]")


def test_verify_reads_each_benchmark_and_env_and_hub_cache(peers, tmp_path, monkeypatch, capsys):
    from mvx_tasks.cli import main

    for key, folder in peers.items():
        report = verify(folder, benchmark=key)
        assert report.ok, report.render()
        assert sum(report.counts.values()) == {"cvbench": 15, "mvu_eval": 8, "crossvid": 2}[key]
        assert report.n_videos >= 3
        assert any("the full" in w or "CrossVid CC+NC" in w for w in report.warnings)  # 15 of 1,000 ...
    assert main(["verify", str(peers["cvbench"]), "--benchmark", "cvbench", "--no-decode"]) == 0
    out = capsys.readouterr().out
    assert "CVBench dataset at" in out and "CVB_COR" in out and "1000" in out
    monkeypatch.setenv("CVBENCH_DATA", str(peers["cvbench"]))
    assert resolve_benchmark_root(CVBENCH) == (peers["cvbench"], "CVBENCH_DATA")
    # without the variable: the hub cache $HF_HOME/<cache_dir>, used offline when pre-filled
    monkeypatch.delenv("MVU_EVAL_DATA", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import shutil

    shutil.copytree(peers["mvu_eval"], tmp_path / "hf" / MVU_EVAL.cache_dir)
    root, how = resolve_benchmark_root(MVU_EVAL)
    assert how == "hub MVU-Eval-Team/MVU-Eval-Data" and len(load_benchmark(MVU_EVAL, root)) == 8


def test_generated_task_yamls_are_in_sync_and_name_no_builtin():
    from mvx_tasks.taskgen import TASKS_DIR, all_files, stale_files

    assert stale_files() == []
    files = all_files()
    assert "cvbench_mv/cvbench_mv_cor.yaml" in files and "crossvid_frames/crossvid_frames_cc.yaml" in files
    import lmms_eval

    builtin = Path(lmms_eval.__file__).parent / "tasks"
    names = {Path(rel).stem for rel in files}
    assert not names & {p.stem for p in builtin.rglob("*.yaml")}  # e.g. lmms-eval's cv_bench is another benchmark
    import yaml

    top = yaml.safe_load((TASKS_DIR / "crossvid" / "crossvid.yaml").read_text())
    assert top["aggregate_metric_list"][0]["weight_by_size"] is False  # CrossVid's O.Avg: mean over tasks
    assert top["task"] == ["crossvid_cc", "crossvid_nc"]
    cvb = yaml.safe_load((TASKS_DIR / "cvbench_mv" / "cvbench_mv.yaml").read_text())
    assert cvb["aggregate_metric_list"][0]["weight_by_size"] is True
    assert cvb["task"] == ["cvbench_mv_object", "cvbench_mv_event", "cvbench_mv_complex"]


def test_messages_carry_each_benchmarks_label_text_and_sama_reads_it(peers, monkeypatch):
    from mvx_tasks import harness
    from mvx_tasks.data import sample_to_doc
    from sama_model.adapters.messages import Item, build_question

    s = load_benchmark(MVU_EVAL, peers["mvu_eval"])[0]
    doc = sample_to_doc(s, peers["mvu_eval"])
    kw = {"post_prompt": MVU_EVAL.post_prompt, "video_header": MVU_EVAL.header}
    msgs = harness.doc_to_messages(doc, kw)
    texts = [c["text"] for c in msgs[0]["content"] if c["type"] == "text"]
    assert texts[:3] == ["The following is the Video 1", "The following is the Video 2", "The following is the Video 3"]
    for bm in PEERS:  # SAMA's parser takes each benchmark's label text as the video's label
        items = []
        for i in (1, 2, 3):
            items += [Item("text", bm.header.format(n=i)), Item("video", f"/x/{i}.mp4")]
        items.append(Item("text", "Which video shows red?\nA. Video 1\nB. Video 2\nC. Video 3\nAnswer with the letter."))
        q = build_question(items, "q1")
        assert [v.label for v in q.videos] == ["Video 1", "Video 2", "Video 3"], bm.name
        assert q.question == "Which video shows red?" and list(q.options) == ["A", "B", "C"]
    # frames: CrossVid splits a total of 128 frames evenly over the question's videos
    cxv = load_benchmark(CROSSVID, peers["crossvid"])[0]
    monkeypatch.delenv("MVX_FRAMES_PER_VIDEO", raising=False)
    assert harness._n_frames({"total_frames": 128}, 4) == 32 and harness._n_frames({"n_frames": 8}, 4) == 8
    text = harness.frames_doc_to_text(sample_to_doc(cxv, peers["crossvid"]), {"total_frames": 8})
    assert "images 1-2 are Video 1; images 3-4 are Video 2; images 5-6 are Video 3; images 7-8 are Video 4" in text


def test_harness_configs_for_peers_validate():
    from mvx_tasks.harness_configs import CONFIG_DIR, ConfigError, build_command, load_config, load_configs

    cfgs = {c.name: c for c in load_configs([CONFIG_DIR / "peers"])}
    assert {c.route for c in cfgs.values()} == {"agent", "video", "frames"}
    assert cfgs["gemma_3_4b_it_peers"].tasks == "cvbench_mv_frames,mvu_eval_mv_frames,crossvid_frames"
    assert "cvbench_mv,mvu_eval_mv,crossvid" in build_command(cfgs["sama_offline_peers"])
    bad = CONFIG_DIR / "peers" / "qwen2_5_vl_7b_peers.yaml"
    import tempfile

    import yaml

    raw = yaml.safe_load(bad.read_text())
    raw["tasks"] = "cvbench_mv_frames"  # a video route on the frames group: refused
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "x.yaml"
        p.write_text(yaml.safe_dump(raw))
        with pytest.raises(ConfigError, match="needs task group"):
            load_config(p)


def test_leaderboard_shows_benchmarks_side_by_side(tmp_path):
    from mvx_tasks.leaderboard.output import markdown, write_leaderboard
    from mvx_tasks.leaderboard.table import build_leaderboard

    def rec(i, task, ok):
        return {"id": f"q{i}", "task": task, "raw_output": "A", "parsed": "A", "answer": "A" if ok else "B",
                "correct": ok, "unparsed": False, "failed": None, "agent_failed": None}

    out = tmp_path / "run" / "sama"
    out.mkdir(parents=True)
    tasks = {"cvbench_mv_cor": [rec(1, "CVB_COR", True), rec(2, "CVB_COR", False)],
             "cvbench_mv_csr": [rec(3, "CVB_CSR", True)],
             "crossvid_cc": [rec(4, "CXV_CC", True)], "crossvid_nc": [rec(5, "CXV_NC", False), rec(6, "CXV_NC", False)]}
    results = {t: {"mvx_acc,none": 100.0 * sum(r["correct"] for r in rs) / len(rs)} for t, rs in tasks.items()}
    (out / "20260101_results.json").write_text(json.dumps({"results": results, "config": {"model": "sama",
                                                           "model_args": "profile=offline"}}))
    for t, rs in tasks.items():
        (out / f"20260101_samples_{t}.jsonl").write_text("".join(json.dumps({"mvx_acc": r}) + "\n" for r in rs))
    board = build_leaderboard([tmp_path / "run"], n_boot=50)
    by_bench = {e.benchmark: e for e in board.runs()}
    assert set(by_bench) == {"CVBench", "CrossVid"} and by_bench["CrossVid"].label == "CrossVid CC+NC"
    assert by_bench["CVBench"].avg == pytest.approx(200 / 3)  # question-weighted
    assert by_bench["CrossVid"].avg == pytest.approx(50.0)  # mean of CC (100) and NC (0), as CrossVid reports
    assert by_bench["CVBench"].per_level == {"cvb_object": 50.0, "cvb_event": 100.0}
    md = markdown(board)
    assert "## Benchmarks side by side" in md and "## CVBench" in md and "## CrossVid CC+NC" in md
    # chance from the questions (these records predate per-question chance: the registry's per task)
    assert by_bench["CVBench"].chance == pytest.approx(100 * (2 * 0.254 + 0.455) / 3)
    assert by_bench["CrossVid"].chance == pytest.approx(25.0)
    files = write_leaderboard(board, tmp_path / "lb")
    side = files["benchmarks_csv"].read_text().splitlines()
    assert side[0].startswith("model,kind,MVX-Bench,MVX-Bench answered,MVX-Bench chance,CVBench,CVBench answered,"
                              "CVBench chance,MVU-Eval")
    assert "CrossVid CC+NC,CrossVid CC+NC answered" in side[0]
    assert any(line.startswith("sama:") and ",66.67,3," in line and ",50.00,3" in line for line in side)


def test_vlmeval_dataset_reads_the_authors_files(peers, tmp_path, monkeypatch):
    pytest.importorskip("vlmeval")
    from mvx_tasks.vlmeval.dataset import MVXVideoMCQ

    monkeypatch.setenv("LMUData", str(tmp_path / "LMUData"))
    monkeypatch.setenv("MVU_EVAL_DATA", str(peers["mvu_eval"]))
    ds = MVXVideoMCQ(dataset="MVU_Eval_MV_8frame", nframe=8)
    assert len(ds) == 8 and ds.benchmark == "MVU-Eval"
    msg = ds.build_prompt(0, video_llm=True)
    assert [m["value"] for m in msg if m["type"] == "text"][:3] == [
        "The following is the Video 1", "The following is the Video 2", "The following is the Video 3"]
    assert "Please select the correct answer" in msg[-1]["value"]
    frames = ds.build_prompt(0)
    assert sum(m["type"] == "image" for m in frames) == 24


# ----------------------------------------------------------------------------- the real CLI (slow)

def _env(peers: dict[str, Path]) -> dict[str, str]:
    return {bm.env: str(peers[bm.key]) for bm in PEERS}


@pytest.mark.slow
def test_sama_offline_runs_all_three_groups_through_lmms_eval(peers, tmp_path):
    from harness_run import run_lmms_eval, samples

    res, out = run_lmms_eval(["--model", "sama", "--model_args", "profile=offline",
                              "--tasks", "cvbench_mv,mvu_eval_mv,crossvid", "--batch_size", "1"],
                             tmp_path / "out", env=_env(peers))
    for group in ("cvbench_mv", "mvu_eval_mv", "crossvid"):
        assert 0.0 <= res["groups"][group]["mvx_acc,none"] <= 100.0, group
    recs = {t: samples(out, t) for t in ("cvbench_mv_cor", "cvbench_mv_csr", "mvu_eval_mv_count", "mvu_eval_mv_tr",
                                         "crossvid_cc", "crossvid_nc")}
    assert {t: [r["mvx_acc"]["id"] for r in rs] for t, rs in recs.items()} == {
        "cvbench_mv_cor": ["cvb-1"], "cvbench_mv_csr": ["cvb-2"], "mvu_eval_mv_count": ["mvu-0"],
        "mvu_eval_mv_tr": ["mvu-1"], "crossvid_cc": ["cxv-cc-0"], "crossvid_nc": ["cxv-nc-0"]}
    assert all(r["mvx_acc"]["failed"] is None for rs in recs.values() for r in rs)
    every = [r["mvx_acc"] for t in CVBENCH.tasks for r in samples(out, CVBENCH.task_name(t.code))]
    assert len(every) == 15 and all(r["failed"] is None for r in every)
    assert res["groups"]["cvbench_mv"]["mvx_acc,none"] == pytest.approx(100 * sum(r["correct"] for r in every) / 15)
    cxv = [recs["crossvid_cc"][0]["mvx_acc"]["correct"], recs["crossvid_nc"][0]["mvx_acc"]["correct"]]
    assert res["groups"]["crossvid"]["mvx_acc,none"] == pytest.approx(50.0 * sum(cxv))
    traces = [json.loads(p.read_text()) for p in out.rglob("sama_traces/*/*.json")]
    by_id = {t["question"]["id"]: t for t in traces}
    # every video of the 4-video questions reached the agent, under the benchmark's labels
    for qid in ("cvb-1", "cxv-cc-0"):
        assert [v["label"] for v in by_id[qid]["question"]["videos"]] == ["Video 1", "Video 2", "Video 3", "Video 4"]
    assert [v["label"] for v in by_id["mvu-0"]["question"]["videos"]] == ["Video 1", "Video 2", "Video 3"]
    assert by_id["cvb-1"]["question"]["options"] == {"A": "Video 1.", "B": "Video 2.", "C": "Video 3.", "D": "Video 4."}


@pytest.mark.slow
def test_tiny_qwen_receives_every_video_on_each_benchmark(peers, tmp_path_factory, tmp_path):
    pytest.importorskip("torchvision")
    from harness_run import run_lmms_eval, samples
    from tiny_models import build_tiny_qwen2_5_vl

    qwen = build_tiny_qwen2_5_vl(tmp_path_factory.mktemp("qwen") / "tiny-qwen2.5-vl")
    log = tmp_path / "spy.jsonl"
    model_args = f"pretrained={qwen},attn_implementation=sdpa,device=cpu,device_map=cpu,max_num_frames=4"
    res, out = run_lmms_eval(
        ["--model", "qwen2_5_vl", "--model_args", model_args,
         "--tasks", "crossvid,cvbench_mv_cor,mvu_eval_mv_count,cvbench_mv_frames_cor", "--batch_size", "1",
         "--gen_kwargs", "max_new_tokens=4"], tmp_path / "out",
        env={**_env(peers), "MVX_SPY_LOG": str(log),
             "PYTHONPATH": os.pathsep.join([str(SPY), os.environ.get("PYTHONPATH", "")])})
    calls = [json.loads(x) for x in log.read_text().splitlines()]
    assert not [c for c in calls if "spy_error" in c]
    # video route: one processor call per question with all its videos (CVBench's 4-video question,
    # MVU-Eval's 3-video one, CrossVid's group: 4 and 2); frames route: the 4-video CVBench question
    # as 4 x 8 labelled frames (its paper's 8 per video)
    assert sorted(c["videos"] for c in calls if c["images"] == 0) == [2, 3, 4, 4]
    assert [c["images"] for c in calls if c["images"]] == [32]
    assert "mvx_acc,none" in res["groups"]["crossvid"]
    for task, qid in (("cvbench_mv_cor", "cvb-1"), ("mvu_eval_mv_count", "mvu-0"), ("crossvid_cc", "cxv-cc-0")):
        [r] = [x["mvx_acc"] for x in samples(out, task)]
        assert r["id"] == qid and r["failed"] is None and 0 <= res["results"][task]["mvx_acc,none"] <= 100
    [rec] = [s["mvx_acc"] for s in samples(out, "cvbench_mv_frames_cor")]
    assert rec["id"] == "cvb-1" and rec["failed"] is None
