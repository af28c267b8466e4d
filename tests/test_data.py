"""Loaders (local folder, hub snapshot), path confinement, and verify."""
import json
import os

import pytest

from fixtures import make_dataset, sample_dict, write_video
from mvx_tasks import data, data_hub, data_verify
from mvx_tasks.cli import main as cli
from mvx_tasks.schema import SchemaError


def test_load_local_and_doc_round_trip(tmp_path):
    root = make_dataset(tmp_path, tasks=["CNT", "RID"], per_task=2, video_frames=3)
    samples = data.load_local(root)
    assert [s.id for s in samples] == ["cnt-0", "cnt-1", "rid-0", "rid-1"]
    doc = data.sample_to_doc(samples[0], root)
    assert json.loads(doc["videos"])[0]["path"] == str((root / "videos/cnt-0_0.mp4").resolve())
    back = data.doc_to_sample(doc)
    assert (back.id, back.answer, back.options, back.meta) == (samples[0].id, "A", samples[0].options, {"note": "fixture"})


def test_symlink_leaving_the_root_is_rejected(tmp_path):
    root = tmp_path / "ds"
    (root / "videos").mkdir(parents=True)
    outside = write_video(tmp_path / "secret.mp4", n_frames=2)
    os.symlink(outside, root / "videos" / "q_0.mp4")
    row = sample_dict("q", "FD", ["Video A", "Video B"])
    write_video(root / "videos" / "q_1.mp4", n_frames=2)
    (root / "data.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(SchemaError, match="outside the dataset folder"):
        data.load_local(root)


def test_missing_data_file_says_how_to_make_one(tmp_path):
    with pytest.raises(data.DataSourceError, match="mvx-bench synth --out"):
        data.load_local(tmp_path)


def test_verify_reports_every_problem_and_exits_non_zero(tmp_path, capsys):
    root = make_dataset(tmp_path, tasks=["FD"], per_task=2, video_frames=3)
    rows = [json.loads(x) for x in (root / "data.jsonl").read_text().splitlines()]
    rows.append(dict(rows[0]))  # duplicate id
    rows.append(dict(rows[1], id="fd-9", task="NOPE"))
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "videos" / "fd-1_0.mp4").unlink()
    (root / "videos" / "fd-1_1.mp4").write_bytes(b"garbage")
    report = data_verify.verify(root)
    text = "\n".join(report.errors)
    assert "question id 'fd-0' appears 2 times" in text
    assert "unknown task code 'NOPE'" in text
    assert f"question 'fd-1', video 'Video A': video file {(root / 'videos/fd-1_0.mp4').resolve()} does not exist" in text
    assert "question 'fd-1', video 'Video B'" in text and "cannot be decoded" in text
    assert report.counts == {"FD": 3}
    assert cli(["verify", str(root)]) == 1
    assert "FAILED with 4 error(s)" in capsys.readouterr().out


def test_verify_passes_on_a_clean_folder(tmp_path, capsys):
    root = make_dataset(tmp_path, tasks=["CNT"], per_task=1, video_frames=3)
    assert cli(["verify", str(root)]) == 0
    out = capsys.readouterr().out
    assert "CNT" in out and "OK" in out and "videos checked: 5" in out


@pytest.mark.parametrize("row,expect", [
    ({"question_id": 7, "task_type": "Counting", "question": "How many?", "choices": ["Video A", "Video B", "Video C", "Video D"],
      "answer_idx": 2, "video_paths": ["r.mp4", "a.mp4", "b.mp4", "c.mp4", "d.mp4"]},
     {"id": "7", "task": "CNT", "answer": "C", "labels": ["Reference", "Video A", "Video B", "Video C", "Video D"]}),
    ({"id": "x", "category": "forensic detection", "query": "Which is fake?", "A": "first", "B": "second",
      "gt": "(b)", "videos": '["v1.mp4", "v2.mp4"]'},
     {"id": "x", "task": "FD", "answer": "B", "labels": ["Video 1", "Video 2"]}),
    ({"uid": "y", "task": "de", "prompt": "Does it strengthen?", "options": {"A": "Strengthens", "B": "Weakens"},
      "answer": "Weakens", "video": "p.mp4, u.mp4", "video_labels": ["Premise", "Update"]},
     {"id": "y", "task": "DE", "answer": "B", "labels": ["Premise", "Update"]}),
])
def test_map_hub_row_handles_likely_column_names(row, expect):
    from mvx_tasks.schema import validate_sample

    s = validate_sample(data_hub.map_hub_row(row))
    assert (s.id, s.task, s.answer, [v.label for v in s.videos]) == (expect["id"], expect["task"], expect["answer"], expect["labels"])


def test_map_hub_row_error_lists_found_and_expected_columns():
    with pytest.raises(SchemaError) as e:
        data_hub.map_hub_row({"id": "z", "task": "CNT", "foo": 1, "bar": 2}, where="test.parquet[0]")
    msg = str(e.value)
    assert "no column for question, answer, videos, options" in msg
    assert "Columns found: ['bar', 'foo', 'id', 'task']" in msg
    assert "question: question, query, prompt" in msg and "Fix:" in msg


def test_prefilled_hub_cache_works_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache = tmp_path / "hf" / "mvx_bench"
    (cache / "videos").mkdir(parents=True)
    for n in ("p", "u"):
        write_video(cache / "videos" / f"{n}.mp4", n_frames=2)
    import pandas as pd
    pd.DataFrame([{"id": "h1", "task": "DE", "question": "Strengthen or weaken?", "options": '{"A": "Strengthens", "B": "Weakens"}',
                   "answer": "A", "videos": '["p.mp4", "u.mp4"]', "video_labels": '["Premise", "Update"]'}]).to_parquet(cache / "test.parquet")
    assert data_hub.fetch_hub_dataset() == cache
    [s] = data_hub.load_hub()
    assert (s.id, s.task, s.videos[0].path, s.videos[1].label) == ("h1", "DE", "videos/p.mp4", "Update")


def test_empty_cache_offline_fails_fast_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(data.DataSourceError) as e:
        data_hub.fetch_hub_dataset()
    assert "huggingface-cli download MVX-bench/MVX-Bench" in str(e.value) and "MVX_BENCH_DATA" in str(e.value)
