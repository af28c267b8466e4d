"""Real published releases read whole: rows copied from CVBench's own annotation file (tests/published/),
MVU-Eval in its published schema beside the TSV VLMEvalKit writes, CrossVid's QA folder, a save_to_disk
folder, MVX-Bench's hub copy with a user column mapping; each quirk of the real files has a test here."""
from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from fixtures import write_video
from mvx_tasks.benchmarks import CROSSVID, CVBENCH, MVU_EVAL
from mvx_tasks.data import DataSourceError
from mvx_tasks.data_peers import load_benchmark, load_benchmark_report
from mvx_tasks.data_release import STRICT_ENV, report_for

PUBLISHED = Path(__file__).parent / "published" / "cvbench_rows.json"
ROWS = json.loads(PUBLISHED.read_text(encoding="utf-8"))


def _videos_of(rows: list[dict]) -> list[str]:
    return sorted({r[f"video_{i}"] for r in rows for i in range(1, 5) if r[f"video_{i}"]})


def authors_layout(root: Path, rows: list[dict] = ROWS, videos: bool = True) -> Path:
    """As the authors ship it (Video-R1/src/r1-v/Evaluation/): CVBench.json, the videos in
    CVBench/<group>/<file>, and their example.json (27 rows, ids shared with CVBench.json) beside it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "CVBench.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    (root / "example.json").write_text(json.dumps([r for r in rows if r["id"] == 10]), encoding="utf-8")
    (root / "eval_results").mkdir(exist_ok=True)
    (root / "eval_results" / "empty.json").write_text("[]")
    if videos:
        for i, rel in enumerate(_videos_of(rows)):
            write_video(root / "CVBench" / rel, (40 + 20 * i % 200, 90, 160), n_frames=4, size=32)
    return root


@pytest.fixture(scope="module")
def cvb(tmp_path_factory) -> Path:
    return authors_layout(tmp_path_factory.mktemp("cvb") / "Evaluation")


# ----------------------------------------------------------------------------- CVBench's own rows

def test_published_rows_load_whole_with_the_joined_options_row_repaired(cvb):
    samples, report = load_benchmark_report(CVBENCH, cvb)
    assert [s.id for s in samples] == ["0", "10", "26", "223", "296", "886", "960", "996"]
    by = {s.id: s for s in samples}
    assert by["996"].options == {"A": "Use the same color paper", "B": "Reinforce wings with tape",
                                 "C": "Maintain precise folds and symmetry", "D": "Widen the wings of a paper airplane"}
    assert by["996"].answer == "D" and by["996"].task == "CVB_CPT"
    assert [(n.id, n.task) for n in report.repairs] == [("996", "CVB_CPT")]
    assert "one string held 4 lettered options" in report.repairs[0].what and report.skips == []
    # Yes./No. with trailing punctuation or space, or none, answered by the word; lettered Yes/No by letter
    assert [(by[i].options, by[i].answer) for i in ("0", "26", "296", "223", "886")] == [
        ({"A": "Yes.", "B": "No."}, "B"), ({"A": "Yes.", "B": "No."}, "A"), ({"A": "Yes", "B": "No"}, "A"),
        ({"A": "Yes.", "B": "No."}, "B"), ({"A": "Yes.", "B": "No."}, "A")]
    # exactly the release's file: example.json (same ids) and eval_results/ are listed, never read
    assert report.files == ["CVBench.json"] and {"example.json", "eval_results/empty.json"} <= set(report.not_read)
    # the same file names in groups 63 and 88: each row gets its own group's file
    assert [v.path for v in by["886"].videos] == ["CVBench/63/1zI7b3qkrVA.mp4", "CVBench/63/soZ8AC6tF-Q.mp4",
                                                  "CVBench/63/ZRYSAPvhIoI.mp4"]
    assert by["960"].videos[0].path == "CVBench/88/1zI7b3qkrVA.mp4" and report.videos == []
    assert report_for(cvb) is report


def test_counts_are_checked_against_the_published_ones(cvb, caplog):
    assert sum(t.n_questions for t in CVBENCH.tasks) == 1000 == CVBENCH.n_questions
    assert sum(t.n_questions for t in MVU_EVAL.tasks) == 1824 == MVU_EVAL.n_questions
    assert (CVBENCH.published_counts()["CVB_CAD"], CVBENCH.published_counts()["CVB_CEM"]) == (84, 74)
    assert CROSSVID.published_counts() == {}  # not published: nothing to check
    with caplog.at_level(logging.WARNING):
        _, report = load_benchmark_report(CVBENCH, cvb)
    msg = "CVBench task CVB_CSR (Cross-video Scene Recognition): expected 149 questions (published), found 7 in CVBench.json"
    assert msg in report.count_warnings and msg in caplog.text
    assert "repaired 996" in caplog.text and len(report.count_warnings) == 15  # 13 tasks: 0 found


def test_a_file_name_in_two_groups_is_never_picked_by_bare_name(tmp_path):
    root = authors_layout(tmp_path / "ev", [r for r in ROWS if r["id"] in (886, 960)], videos=False)
    for group, rel in (("x", "1zI7b3qkrVA.mp4"), ("y", "1zI7b3qkrVA.mp4"), ("x", "soZ8AC6tF-Q.mp4"),
                       ("x", "ZRYSAPvhIoI.mp4")):
        write_video(root / "flat" / group / rel, n_frames=2, size=32)
    samples, report = load_benchmark_report(CVBENCH, root)
    by = {s.id: s for s in samples}
    # the unique bare name is found; the one in two folders is left where the release puts it, and reported
    assert by["886"].videos[1].path == "flat/x/soZ8AC6tF-Q.mp4"
    assert by["886"].videos[0].path == "CVBench/63/1zI7b3qkrVA.mp4"
    assert [(n.id, "matches 2 files in different folders" in n.what) for n in report.videos] == [
        ("886", True), ("960", True)]
    # group folders elsewhere (a copy unpacked one level down): matched by <group>/<file>
    shutil.rmtree(root / "flat")
    for g in ("63", "88"):
        write_video(root / "unpacked" / g / "1zI7b3qkrVA.mp4", n_frames=2, size=32)
    by = {s.id: s for s in load_benchmark(CVBENCH, root)}
    assert (by["886"].videos[0].path, by["960"].videos[0].path) == ("unpacked/63/1zI7b3qkrVA.mp4",
                                                                    "unpacked/88/1zI7b3qkrVA.mp4")


def test_an_unmappable_row_is_skipped_and_reported_or_strict_refuses(tmp_path, monkeypatch):
    bad = [dict(ROWS[1], id=5000, task_type="Cross-video Dancing"),
           dict(ROWS[1], id=5001, options=["Maybe, or perhaps not"])]
    root = authors_layout(tmp_path / "ev", ROWS + bad, videos=False)
    samples, report = load_benchmark_report(CVBENCH, root, strict=False)
    assert len(samples) == 8 and [(n.id, n.task) for n in report.skips] == [("5000", None), ("5001", "CVB_CSR")]
    assert "unknown task_type 'Cross-video Dancing'" in report.skips[0].what
    assert "fewer than two choices" in report.skips[1].what and "CVBench.json[9]" in report.skips[1].where
    assert report.task_notes("CVB_CSR").startswith("repaired 0, skipped 2: 5000 (")
    with pytest.raises(DataSourceError, match=r"strict.*row 5000 \(.*CVBench.json\[8\]\): .*unknown task_type"):
        load_benchmark(CVBENCH, root, strict=True)
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(DataSourceError, match="row 5000"):
        load_benchmark(CVBENCH, root)


def test_duplicate_ids_are_an_error_naming_both_places(tmp_path):
    root = authors_layout(tmp_path / "ev", ROWS + [dict(ROWS[0], question="asked again")], videos=False)
    with pytest.raises(DataSourceError) as e:
        load_benchmark(CVBENCH, root)
    assert "question id '0' appears twice" in str(e.value)
    assert "CVBench.json[0]" in str(e.value) and "CVBench.json[8]" in str(e.value)


def test_save_to_disk_layout_is_read_and_its_metadata_is_not(tmp_path):
    datasets = pytest.importorskip("datasets")
    root = tmp_path / "repo"
    rows = [{k: v for k, v in r.items()} for r in ROWS]
    datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)}).save_to_disk(str(root / "mvr_dataset"))
    assert (root / "mvr_dataset" / "test" / "dataset_info.json").is_file()
    samples, report = load_benchmark_report(CVBENCH, root)
    assert [s.id for s in samples] == [str(r["id"]) for r in ROWS] and report.files == ["mvr_dataset/dataset_dict.json"]
    assert [n.id for n in report.repairs] == ["996"] and report.skips == []
    # a benchmark not published in that form: refused, with what was found and what to do
    with pytest.raises(DataSourceError, match="save_to_disk folder.*not published in that form"):
        load_benchmark(MVU_EVAL, root / "mvr_dataset")


# ----------------------------------------------------------------------------- MVU-Eval

MVU_ANNOS = {  # the published schema: {index: {video_paths, question, options, ground_truth, task}}
    "0": {"video_paths": ["video/m_red.mp4", "video/m_green.mp4", "video/m_blue.mp4"],
          "question": "How many videos show red?", "options": ["A. 0", "B. 1", "C. 2", "D. 3"],
          "ground_truth": "B", "task": "Counting"},
    "1": {"video_paths": ["video/m_green.mp4", "video/m_blue.mp4"], "question": "Which shows blue first?",
          "options": ["A. Video 1", "B. Video 2"], "ground_truth": "B", "task": "TR"},  # a short task code
    "2": {"video_paths": ["video/m_red.mp4", "video/m_blue.mp4"], "question": "Which object is shared?",
          "options": [f"{c}. item {c}" for c in "ABCDEFGHIJK"], "ground_truth": "K", "task": "OR"},
    "3": {"video_paths": ["video/m_red.mp4", "video/m_green.mp4"], "question": "Which is larger?",
          "options": ["A. first", "B. second", "C. same"], "ground_truth": "C", "task": "KIR"},
}


def mvu_layout(root: Path) -> Path:
    """The hub's files as VLMEvalKit fetches them: the JSON and the videos flat at the folder's top."""
    root.mkdir(parents=True, exist_ok=True)
    for c in ("red", "green", "blue"):
        write_video(root / f"m_{c}.mp4", n_frames=4, size=32)
    (root / "MVU_Eval_QAs.json").write_text(json.dumps(MVU_ANNOS), encoding="utf-8")
    return root


def _vlmevalkit_tsv(root: Path, monkeypatch) -> tuple[object, object]:
    """VLMEvalKit's own MVU-Eval conversion run on the folder (it writes mvu_eval.tsv beside the JSON)."""
    pytest.importorskip("vlmeval")
    import vlmeval.dataset.mvu_eval as mvu
    from vlmeval.smp import load

    monkeypatch.setattr(mvu, "snapshot_download", lambda **kw: None)  # the files are already there
    monkeypatch.setattr(mvu, "LMUDataRoot", lambda: str(root.parent.parent))
    ds = object.__new__(mvu.MVUEval)  # its __init__ asserts a 'video' column its own TSV lacks (ms-vlmeval 0.0.20)
    ret = ds.prepare_dataset("MVU-Eval")
    ds.data_root, ds.data, ds.nframe, ds.fps = ret["root"], load(ret["data_file"]), 0, -1
    return ds, ret


def test_mvu_json_with_vlmevalkits_tsv_beside_it_is_read_once(tmp_path, monkeypatch):
    root = mvu_layout(tmp_path / "LMUData" / "datasets" / "MVU-Eval")
    _vlmevalkit_tsv(root, monkeypatch)
    assert (root / "mvu_eval.tsv").is_file()
    samples, report = load_benchmark_report(MVU_EVAL, root)
    assert [s.id for s in samples] == ["mvu-0", "mvu-1", "mvu-2", "mvu-3"]  # not eight
    assert report.files == ["MVU_Eval_QAs.json"] and "mvu_eval.tsv" in report.not_read
    assert [s.task for s in samples] == ["MVU_COUNT", "MVU_TR", "MVU_OR", "MVU_KIR"]  # full names and short codes
    assert [len(s.options) for s in samples] == [4, 2, 11, 3] and samples[2].answer == "K"
    # the TSV alone (VLMEvalKit's converted copy) gives the same questions
    (root / "MVU_Eval_QAs.json").unlink()
    again = load_benchmark(MVU_EVAL, root)
    assert [(s.id, s.task, s.options, s.answer, s.videos) for s in again] == \
        [(s.id, s.task, s.options, s.answer, s.videos) for s in samples]
    (root / "other.json").write_text("{}")
    (root / "second.json").write_text("{}")
    with pytest.raises(DataSourceError, match="2 files match \\*.json .*the release is one annotation file"):
        load_benchmark(MVU_EVAL, root)


def test_mvu_agrees_with_vlmevalkits_own_mvu_eval_question_for_question(tmp_path, monkeypatch):
    root = mvu_layout(tmp_path / "LMUData" / "datasets" / "MVU-Eval")
    theirs, _ = _vlmevalkit_tsv(root, monkeypatch)
    ours = {s.id: s for s in load_benchmark(MVU_EVAL, root)}
    assert len(ours) == len(theirs.data) == len(MVU_ANNOS)
    for i in range(len(theirs.data)):
        line = theirs.data.iloc[i]
        s = ours[f"mvu-{int(line['index'])}"]
        msg = theirs.build_prompt(line, video_llm=True)
        videos = [m["value"] for m in msg if m["type"] == "video"]
        texts = [m["value"] for m in msg if m["type"] == "text"]
        assert s.question == line["question"] and texts[len(videos)] == s.question
        assert [f"{k}. {v}" for k, v in s.options.items()] == json.loads(line["options"])
        assert s.answer == line["ground_truth"] and s.meta["task_name"] == line["task"]
        assert [str((root / v.path).resolve()) for v in s.videos] == [str(Path(v).resolve()) for v in videos]
        assert texts[:len(videos)] == [MVU_EVAL.header.format(n=k) for k in range(1, len(videos) + 1)]


def test_mvu_offers_the_authors_32_frames():
    from mvx_tasks.vlmeval.names import dataset_names, frames_of

    assert MVU_EVAL.frames_per_video == 32 and frames_of("MVU_Eval_MV") == 32
    assert "MVU_Eval_MV_32frame" in dataset_names() and frames_of("MVU_Eval_MV_32frame") == 32


# ----------------------------------------------------------------------------- CrossVid

def test_crossvid_reads_only_cc_and_nc_and_fetches_only_their_files(tmp_path, monkeypatch):
    root = tmp_path / "CrossVid"
    for name in ("cook/a.mp4", "cook/b.mp4", "movie/c.mp4", "movie/d.mp4"):
        write_video(root / "videos" / name, n_frames=2, size=32)
    (root / "QA").mkdir()
    (root / "QA" / "CC.json").write_text(json.dumps([{"id": 0, "videos": ["cook/a.mp4", "cook/b.mp4"],
                                                       "question": "Which?", "options": ["A. 1", "B. 2"], "answer": "A"}]))
    (root / "QA" / "NC.json").write_text(json.dumps([{"id": 0, "videos": ["movie/c.mp4", "movie/d.mp4"],
                                                       "question": "Who?", "options": ["A. x", "B. y"], "answer": "B"}]))
    (root / "QA" / "BU.json").write_text(json.dumps([{"id": 0, "videos": ["x.mp4"], "answer": ["A", "C"]}]))
    (root / "results").mkdir()
    (root / "results" / "CC_result.json").write_text(json.dumps([{"id": 0, "answer": "A", "correct": True}]))
    samples, report = load_benchmark_report(CROSSVID, root)
    assert [(s.id, s.videos[0].path) for s in samples] == [("cxv-cc-0", "videos/cook/a.mp4"),
                                                            ("cxv-nc-0", "videos/movie/c.mp4")]
    assert {"QA/BU.json", "results/CC_result.json"} <= set(report.not_read)
    assert CROSSVID.display_name == "CrossVid CC+NC" and CVBENCH.display_name == "CVBench"
    assert CROSSVID.scope_name(["CXV_CC"]) == "CrossVid CC"
    # the hub fetch asks only for the files CC and NC read
    calls = []

    def fake(**kw):
        calls.append(kw)
        Path(kw["local_dir"]).mkdir(parents=True, exist_ok=True)
        return kw["local_dir"]

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv(CROSSVID.env, raising=False)
    from mvx_tasks.data_peers import resolve_benchmark_root

    resolve_benchmark_root(CROSSVID)
    assert calls[0]["allow_patterns"] == ["QA/CC.json", "QA/NC.json", "videos/cook*", "videos/movie*"]


# ----------------------------------------------------------------------------- verify

def test_verify_lists_repairs_skips_and_count_warnings_by_id(tmp_path, capsys):
    from mvx_tasks.cli import main

    root = authors_layout(tmp_path / "ev", ROWS + [dict(ROWS[1], id=5000, task_type="Cross-video Dancing")])
    assert main(["verify", str(root), "--benchmark", "cvbench"]) == 0
    out = capsys.readouterr().out
    assert "CVBench at" in out and "9 rows from CVBench.json -> 8 questions; repaired 1, skipped 1" in out
    assert "repaired 996 (" in out and "skipped 5000 (" in out and "not read: example.json" in out
    assert "warning: CVBench task CVB_CPT (Cross-video Procedural Transfer): expected 51 questions (published), " \
           "found 1 in CVBench.json" in out and f"videos checked: {len(_videos_of(ROWS))}" in out
    assert main(["verify", str(root), "--benchmark", "cvbench", "--strict", "--no-decode"]) == 1
    assert "row 5000" in capsys.readouterr().out


# ----------------------------------------------------------------------------- MVX-Bench's hub copy

def _hub_copy(root: Path) -> Path:
    import pandas as pd

    for n in ("p", "u", "a", "b"):
        write_video(root / "videos" / f"{n}.mp4", n_frames=2, size=32)
    rows = [{"qid": "h1", "kind": "DE", "stem": "Strengthen or weaken?", "A": "Strengthens", "B": "Weakens",
             "gold": "A", "clips": '["p.mp4", "u.mp4"]'},
            {"qid": "h2", "kind": "FD", "stem": "Which is fake?", "A": "first", "B": "second", "gold": "second",
             "clips": '["a.mp4", "b.mp4"]'},
            {"qid": "h3", "kind": "FD", "stem": "Which is fake?", "A": "first", "B": "second", "gold": None,
             "clips": '["a.mp4", "b.mp4"]'}]
    (root / "data").mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(root / "data" / "test-00000-of-00001.parquet")
    (root / "README.md").write_text("card")
    (root / "stats.json").write_text(json.dumps({"n": 3}))  # a stray table file: not read as questions
    return root


def test_hub_columns_show_the_mapping_and_take_a_users_columns(tmp_path, capsys, monkeypatch):
    from mvx_tasks.cli import main
    from mvx_tasks.data_hub import HUB_COLUMNS_ENV, load_hub

    root = _hub_copy(tmp_path / "hub")
    assert main(["verify", str(root), "--hub-columns"]) == 1  # guessed names do not cover this copy
    out = capsys.readouterr().out
    assert "columns found (7): A, B, clips, gold, kind, qid, stem" in out
    assert "rows: 3; mapped 0; not mapped 3" in out and "h1 (" in out and "no column for task, question, answer" in out
    spec = tmp_path / "cols.yaml"
    spec.write_text("columns:\n  task: kind\n  question: stem\n  answer: gold\n  videos: clips\n")
    assert main(["verify", str(root), "--hub-columns", str(spec), "id=qid"]) == 1  # h3 has no answer
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "task      kind                        given    2" in lines and "id        qid                         given    2" in lines
    assert "options   A|B                         guessed  2" in lines
    assert "rows: 3; mapped 2; not mapped 1" in out and "  h3 (" in out and "not read: stats.json" in out
    assert "per task: CNT 0/150, FD 1/100" in out
    monkeypatch.setenv(HUB_COLUMNS_ENV, "task=kind,question=stem,answer=gold,videos=clips")
    samples = load_hub(root)
    assert [(s.id, s.task, s.answer, s.videos[0].path) for s in samples] == [("h1", "DE", "A", "videos/p.mp4"),
                                                                            ("h2", "FD", "B", "videos/a.mp4")]
    with pytest.raises(DataSourceError, match="row h3"):
        load_hub(root, strict=True)
    assert main(["verify", str(root), "--hub-columns", "colour=x"]) == 2
    assert "unknown field 'colour'" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the real CLI (slow)

@pytest.mark.slow
def test_published_rows_run_through_lmms_eval_with_repairs_and_chance_in_the_results(cvb, tmp_path):
    from harness_run import run_lmms_eval, samples

    res, out = run_lmms_eval(["--model", "sama", "--model_args", "profile=offline", "--batch_size", "1",
                              "--tasks", "cvbench_mv_csr,cvbench_mv_cpt", "--limit", "3"],
                             tmp_path / "out", env={"CVBENCH_DATA": str(cvb)})
    cpt, csr = res["results"]["cvbench_mv_cpt"], res["results"]["cvbench_mv_csr"]
    assert cpt["mvx_data_notes,none"].startswith("repaired 1: 996 (options: one string held 4 lettered options")
    assert csr["mvx_data_notes,none"] == "repaired 0, skipped 0"
    assert [r["mvx_acc"]["id"] for r in samples(out, "cvbench_mv_csr")] == ["0", "10", "26"]
    assert csr["mvx_chance,none"] == pytest.approx((50 + 25 + 50) / 3) and cpt["mvx_chance,none"] == 25.0
    [rec] = [r["mvx_acc"] for r in samples(out, "cvbench_mv_cpt")]
    assert rec["id"] == "996" and rec["failed"] is None and rec["chance"] == 0.25


def test_a_broken_line_of_a_jsonl_copy_is_one_skipped_row(tmp_path):
    from mvx_tasks.data_hub import load_hub_report

    root = tmp_path / "hub"
    for n in ("a", "b"):
        write_video(root / "videos" / f"{n}.mp4", n_frames=2, size=32)
    good = {"id": "j1", "task": "FD", "question": "Which is fake?", "options": ["first", "second"], "answer": "A",
            "videos": ["a.mp4", "b.mp4"]}
    (root / "test.jsonl").write_text(json.dumps(good) + "\n{\"id\": \"j2\", \"task\": \n" +
                                     json.dumps(dict(good, id="j3")) + "\n")
    samples, report = load_hub_report(root)
    assert [s.id for s in samples] == ["j1", "j3"] and [s.videos[0].path for s in samples] == ["videos/a.mp4"] * 2
    assert [(n.id, n.where.endswith("test.jsonl:2"), "not valid JSON" in n.what) for n in report.skips] == [
        (None, True, True)]
