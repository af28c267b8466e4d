"""Harness adapters: the lmms-eval chat model and the VLMEvalKit model class."""
from __future__ import annotations

import json
import sys

import pytest

import test_sama_doubles as D
from sama_model.adapters.vlmeval_model import SAMAVLMEval, question_from_message
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


def _requests(task: str, n: int, doc_to_messages) -> list:
    from lmms_eval.api.instance import Instance

    return [Instance("generate_until", ("ctx", doc_to_messages, {}, i, task, "test"), idx=0,
                     metadata={"task": task, "doc_id": i, "repeats": 1}) for i in range(n)]


def test_lmms_eval_chat_adapter_answers_from_the_messages_alone(tmp_path, monkeypatch):
    from mvx_tasks.harness import doc_to_messages
    from sama_model.adapters.lmms_eval_model import SAMA, manifest

    D.reset(SCRIPT)
    qs = [D.make_question(tmp_path, f"q{i}", "CNT", Q, {"A": "Video A", "B": "Video B"}, STEMS) for i in range(3)]
    docs = [doc_for(q, "TRAP-META-VALUE") for q in qs]
    monkeypatch.setattr(sys, "argv", ["lmms-eval", "--model", "sama", "--output_path", str(tmp_path / "out")])
    model = SAMA(batch_size="1", device="cpu", workers=2, cache_dir=str(tmp_path / "cache"), **D.DOUBLE_ARGS)
    model.task_dict = {"mvx_bench_cnt": {"test": {i: d for i, d in enumerate(docs)}}}
    reqs = _requests("mvx_bench_cnt", 3, doc_to_messages)
    assert [r.text for r in model.generate_until(reqs)] == ["Answer: B"] * 3
    assert (model.last_stats.answered, model.last_stats.resumed) == (3, 0)
    # traces go next to lmms-eval's output, one folder per configuration
    assert model.trace_dir.parent == tmp_path / "out" / "sama_traces"
    assert model.trace_dir.name == f"scripted-{model.agent.fingerprint}"
    t = load_trace(model.trace_dir / "q0.json")
    assert "TRAP-META-VALUE" not in json.dumps(t)
    # what a baseline sees: labels from the messages, the question without the order line and options
    assert [v["label"] for v in t["question"]["videos"]] == ["Reference", "Video A", "Video B"]
    assert t["question"]["videos"][0]["path"].endswith("videos/ref.mp4")
    assert t["question"]["question"] == Q and t["question"]["options"] == {"A": "Video A", "B": "Video B"}
    assert t["question"]["instruction"] == "Answer with the option's letter from the given choices directly."
    # no task hint by default: the type comes from the question text
    assert t["question"]["task"] is None
    assert [s for s in t["steps"] if s["kind"] == "planner"][0]["note"].startswith("policy skill:CNT")
    # a second call resumes from the finished traces
    assert [r.text for r in model.generate_until(reqs)] == ["Answer: B"] * 3
    assert (model.last_stats.answered, model.last_stats.resumed) == (0, 3)
    with pytest.raises(NotImplementedError, match="generate_until"):
        model.loglikelihood(reqs)
    m = manifest()
    assert (m.model_id, m.chat_class_path, m.simple_class_path) == ("sama", "sama_model.adapters.lmms_eval_model.SAMA",
                                                                     None)
    assert SAMA.is_simple is False and model.device == "cpu"


def test_interleaved_takes_one_item_of_each_group_in_turn():
    from sama_model.runner import interleaved

    assert interleaved(["a", "a", "b", "b", "b", "c"]) == [0, 2, 5, 1, 3, 4]
    assert interleaved([]) == [] and interleaved(["x"] * 3) == [0, 1, 2]


def test_lmms_eval_adapter_answers_tasks_in_turns_and_returns_request_order(tmp_path, monkeypatch):
    """lmms-eval hands requests task by task; SAMA answers them in turns across tasks (tools warm early,
    a partial run covers every task) and gives each request its own answer back."""
    from mvx_tasks.harness import doc_to_messages
    from sama_model.adapters.lmms_eval_model import SAMA

    D.reset(SCRIPT)
    same = [D.make_question(tmp_path, f"s{i}", "CNT", Q, {"A": "Video A", "B": "Video B"}, STEMS) for i in range(3)]
    swapped = [D.make_question(tmp_path, f"w{i}", "CNT", Q, {"A": "Video B", "B": "Video A"}, STEMS) for i in range(2)]
    monkeypatch.setattr(sys, "argv", ["lmms-eval", "--model", "sama", "--output_path", str(tmp_path / "out")])
    model = SAMA(batch_size="1", device="cpu", workers=1, cache_dir=str(tmp_path / "cache"), **D.DOUBLE_ARGS)
    model.task_dict = {"mvx_bench_cnt": {"test": {i: doc_for(q, "") for i, q in enumerate(same)}},
                       "mvx_bench_vs": {"test": {i: doc_for(q, "") for i, q in enumerate(swapped)}}}
    started = []
    answer = model.agent.answer
    monkeypatch.setattr(model.agent, "answer", lambda q, *a, **k: started.append(q.id) or answer(q, *a, **k))
    reqs = _requests("mvx_bench_cnt", 3, doc_to_messages) + _requests("mvx_bench_vs", 2, doc_to_messages)
    assert [r.text for r in model.generate_until(reqs)] == ["Answer: B"] * 3 + ["Answer: A"] * 2
    assert started == ["s0", "w0", "s1", "w1", "s2"]


def test_task_hint_is_opt_in_and_in_the_fingerprint(tmp_path, monkeypatch):
    from mvx_tasks.harness import doc_to_messages
    from sama_model.adapters.lmms_eval_model import SAMA, task_code_for

    assert (task_code_for("mvx_synth_cnt"), task_code_for("mvx_bench_frames_spr"), task_code_for("mvx_probe"),
            task_code_for("videomme")) == ("CNT", "SPR", None, None)
    D.reset(SCRIPT)
    q = D.make_question(tmp_path, "q0", "CNT", "Pick one.", {"A": "Video A", "B": "Video B"}, STEMS)
    monkeypatch.setattr(sys, "argv", ["lmms-eval"])
    off = SAMA(trace_dir=str(tmp_path / "off"), cache_dir="none", **D.DOUBLE_ARGS)
    on = SAMA(trace_dir=str(tmp_path / "on"), cache_dir="none", task_hint="on", **D.DOUBLE_ARGS)
    assert off.agent.fingerprint != on.agent.fingerprint
    for model in (off, on):
        model.task_dict = {"mvx_bench_cnt": {"test": {0: doc_for(q, "x")}}}
        model.generate_until(_requests("mvx_bench_cnt", 1, doc_to_messages))
    t_off, t_on = load_trace(tmp_path / "off" / "q0.json"), load_trace(tmp_path / "on" / "q0.json")
    # "Pick one." names no type: without the hint the generic procedure runs, with it the CNT skill
    assert [s for s in t_off["steps"] if s["kind"] == "planner"][0]["note"] == "policy generic"
    assert [s for s in t_on["steps"] if s["kind"] == "planner"][0]["note"].startswith("policy skill:CNT")
    assert (t_off["question"]["task"], t_on["question"]["task"]) == (None, "CNT")


def test_lmms_eval_adapter_rejects_unknown_arguments(tmp_path):
    from sama_model.adapters.lmms_eval_model import SAMA
    from sama_model.profiles import ConfigError

    with pytest.raises(ConfigError, match="unknown SAMA model argument 'pretrained'"):
        SAMA(pretrained="x", trace_dir=str(tmp_path))


def test_vlmeval_labelled_videos_and_question(tmp_path):
    msg = [{"type": "text", "value": "Reference:"}, {"type": "video", "value": "/d/ref.mp4"},
           {"type": "text", "value": "Video A:"}, {"type": "video", "value": "/d/a.mp4"},
           {"type": "video", "value": "/d/x.mp4"},
           {"type": "text", "value": "Which video has the same number of cups?\nA. Video A\nB. Video 3\n"
                                     "Answer with the option's letter."}]
    q = question_from_message(msg, dataset="MVX_Bench_CNT")
    assert [(v.label, v.path) for v in q.videos] == [("Reference", "/d/ref.mp4"), ("Video A", "/d/a.mp4"),
                                                     ("Video 3", "/d/x.mp4")]
    assert q.options == {"A": "Video A", "B": "Video 3"} and q.task is None
    assert q.question == "Which video has the same number of cups?"
    assert q.instruction == "Answer with the option's letter."
    assert question_from_message(msg, dataset="MVX_Bench_CNT", task_hint=True).task == "CNT"
    open_q = question_from_message(msg[:5] + [{"type": "text", "value": "How many cups are there?"}])
    assert open_q.open_ended and open_q.question == "How many cups are there?"


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
