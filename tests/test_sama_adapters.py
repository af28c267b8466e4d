"""Harness adapters: the lmms-eval simple model and the VLMEvalKit model class."""
from __future__ import annotations

import json
import sys

import pytest

import test_sama_doubles as D
from sama_model.adapters.vlmeval_model import SAMAVLMEval, labelled_videos, question_from_message
from sama_model.trace import load_trace

SCRIPT = {"ref": {"sg": 2}, "a": {"sg": 1}, "b": {"sg": 2}}
STEMS = {"Reference": "ref", "Video A": "a", "Video B": "b"}
Q = "Which video has the same number of cups as the reference video?"


def doc_for(question, trap: str) -> dict:
    """An MVX harness doc (nested fields as JSON strings, absolute paths) with answer/meta traps."""
    videos = [{"label": v.label, "path": str(question.root) + "/" + v.path, "subtitle": None} for v in question.videos]
    return {"id": question.id, "task": question.task, "question": question.question,
            "options": json.dumps(question.options), "answer": "A", "videos": json.dumps(videos),
            "root": question.root, "meta": json.dumps({"note": trap})}


def test_lmms_eval_adapter_answers_all_requests(tmp_path, monkeypatch):
    from lmms_eval.api.instance import Instance

    from sama_model.adapters.lmms_eval_model import SAMA, manifest

    D.reset(SCRIPT)
    qs = [D.make_question(tmp_path, f"q{i}", "CNT", Q, {"A": "Video A", "B": "Video B"}, STEMS) for i in range(3)]
    docs = [doc_for(q, "TRAP-META-VALUE") for q in qs]
    monkeypatch.setattr(sys, "argv", ["lmms-eval", "--model", "sama", "--output_path", str(tmp_path / "out")])
    model = SAMA(batch_size="1", device="cpu", workers=2, cache_dir=str(tmp_path / "cache"), **D.DOUBLE_ARGS)
    model.task_dict = {"mvx_bench_cnt": {"test": {i: d for i, d in enumerate(docs)}}}
    reqs = [Instance("generate_until", ("ctx", {}, None, i, "mvx_bench_cnt", "test"), idx=0,
                     metadata={"task": "mvx_bench_cnt", "doc_id": i, "repeats": 1}) for i in range(3)]
    assert model.generate_until(reqs) == ["Answer: B"] * 3
    assert (model.last_stats.answered, model.last_stats.resumed) == (3, 0)
    # traces go next to lmms-eval's output, one folder per configuration
    assert model.trace_dir.parent == tmp_path / "out" / "sama_traces"
    assert model.trace_dir.name == f"scripted-{model.agent.fingerprint}"
    t = load_trace(model.trace_dir / "q0.json")
    assert "answer" not in t["question"] and "TRAP-META-VALUE" not in json.dumps(t)
    assert t["question"]["videos"][0]["path"].endswith("videos/ref.mp4")
    # a second call resumes from the finished traces
    assert model.generate_until(reqs) == ["Answer: B"] * 3
    assert (model.last_stats.answered, model.last_stats.resumed) == (0, 3)
    with pytest.raises(NotImplementedError, match="generate_until"):
        model.loglikelihood(reqs)
    m = manifest()
    assert (m.model_id, m.simple_class_path) == ("sama", "sama_model.adapters.lmms_eval_model.SAMA")
    assert SAMA.is_simple is True and model.device == "cpu"


def test_lmms_eval_adapter_rejects_unknown_arguments(tmp_path):
    from sama_model.adapters.lmms_eval_model import SAMA
    from sama_model.profiles import ConfigError

    with pytest.raises(ConfigError, match="unknown SAMA model argument 'pretrained'"):
        SAMA(pretrained="x", trace_dir=str(tmp_path))


def test_vlmeval_labelled_videos_and_question():
    msg = [{"type": "text", "value": "Reference:"}, {"type": "video", "value": "/d/ref.mp4"},
           {"type": "text", "value": "Video A:"}, {"type": "video", "value": "/d/a.mp4"},
           {"type": "video", "value": "/d/x.mp4"},
           {"type": "text", "value": "Which video has the same number of cups?\nA. Video A\nB. Video 3\n"
                                     "Answer with the option's letter."}]
    videos, texts = labelled_videos(msg)
    assert [(v.label, v.path) for v in videos] == [("Reference", "/d/ref.mp4"), ("Video A", "/d/a.mp4"),
                                                   ("Video 3", "/d/x.mp4")]
    q = question_from_message(msg, dataset="MVX_Bench_CNT")
    assert q.options == {"A": "Video A", "B": "Video 3"} and q.task == "CNT"
    assert q.question == "Which video has the same number of cups?\nAnswer with the option's letter."
    with pytest.raises(ValueError, match="options"):
        question_from_message(msg[:5] + [{"type": "text", "value": "no options"}])


def test_vlmeval_model_generate(tmp_path):
    D.reset(SCRIPT)
    q = D.make_question(tmp_path, "v", "CNT", Q, {"A": "Video A", "B": "Video B"}, STEMS)
    msg = []
    for v in q.videos:
        msg += [{"type": "text", "value": f"{v.label}:"}, {"type": "video", "value": f"{tmp_path}/{v.path}"}]
    msg.append({"type": "text", "value": Q + "\nA. Video A\nB. Video B"})
    model = SAMAVLMEval(trace_dir=str(tmp_path / "traces"), cache_dir="none", **D.DOUBLE_ARGS)
    assert model.generate(msg, dataset="MVX_Bench_CNT") == "Answer: B"
    assert len(list((tmp_path / "traces").glob("*.json"))) == 1
