"""Per-answer figures travel with the answer: each answer's note is filed by the question and the
answer text, so an answer from lmms-eval's ``--use_cache`` or from a replayed log is scored with the
same tokens, dollars, failure and source as the first run (through the real lmms-eval CLI)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from harness_run import run_lmms_eval, samples

from mvx_tasks.answer_notes import (
    NO_NOTE,
    AnswerNote,
    NoteStore,
    note_for,
    note_key,
    use_store,
)

DOC = {"id": "q1", "task": "SEQ", "question": "Which order?", "options": json.dumps({"A": "x", "B": "y"}),
       "answer": "A", "videos": "[]", "root": "/data"}


def test_a_note_is_found_by_question_and_answer_text(tmp_path):
    store = NoteStore(tmp_path / "notes")
    note = AnswerNote(tokens=1100, cost_usd=0.002, iterations=2, tool_calls=3, source="planner")
    path = store.write(DOC, "Answer: A\n", note)
    assert path.parent.parent == tmp_path / "notes" and path.name == f"{note_key(DOC, 'Answer: A')}.json"
    # lmms-eval strips the text it scores: the trimmed text finds the note
    assert store.read(DOC, "Answer: A") == note
    # another answer to the question, or the same answer to another question: no note
    assert store.read(DOC, "Answer: B") is None
    assert store.read({**DOC, "id": "q2"}, "Answer: A") is None
    # non-scalar doc fields (images) do not enter the key
    assert note_key({**DOC, "image": object()}, "x") == note_key(DOC, "x")
    assert note.metrics() == {"mvx_tokens": 1100, "mvx_cost_usd": 0.002, "mvx_iterations": 2, "mvx_tool_calls": 3,
                              "mvx_src_planner": 1, "mvx_src_forced": 0, "mvx_src_fallback": 0, "mvx_src_rule": 0}
    path.write_text("{not json")  # a damaged note reads as none, never as an error
    assert store.read(DOC, "Answer: A") is None


def test_the_active_store_serves_process_results(tmp_path, monkeypatch):
    from mvx_tasks.harness import process_results

    monkeypatch.setenv("MVX_ANSWER_NOTES", str(tmp_path / "root"))
    store = use_store("sama-scripted/abc 123")
    assert store.folder == tmp_path / "root" / "sama-scripted_abc_123"
    store.write(DOC, "", AnswerNote(failure="planner unavailable: HTTP 500"))
    out = process_results(DOC, [""])
    assert (out["mvx_agent_failed"], out["mvx_unparsed"]) == (1, 0)
    assert out["mvx_acc"]["agent_failed"] == "planner unavailable: HTTP 500"
    assert note_for(DOC, "Answer: A") is NO_NOTE  # no note: zeros and no failure, as for a baseline
    plain = process_results(DOC, ["Answer: A"])
    assert (plain["mvx_agent_failed"], plain["mvx_tokens"], plain["mvx_acc"]["correct"]) == (0, 0.0, True)


def test_a_note_from_a_samples_line():
    line = {"mvx_tokens": 1100.0, "mvx_cost_usd": 0.002, "mvx_iterations": 1.0, "mvx_tool_calls": 0.0,
            "mvx_src_planner": 0, "mvx_src_forced": 0, "mvx_src_fallback": 1, "mvx_src_rule": 0,
            "mvx_acc": {"agent_failed": None}}
    assert AnswerNote.from_sample(line) == AnswerNote(1100.0, 0.002, 1.0, 0.0, None, "evidence-fallback")
    failed = {"mvx_acc": {"agent_failed": "budget: spent"}, "mvx_tokens": 0}
    assert AnswerNote.from_sample(failed) == AnswerNote(failure="budget: spent")


# ----------------------------------------------------------------------------- through the real CLI

PRICES = "models:\n  local-model: {input: 1.0, cached_input: 0.5, output: 10.0}\n"
FIGURES = ("mvx_tokens", "mvx_cost_usd", "mvx_iterations", "mvx_tool_calls", "mvx_agent_failed", "mvx_src_planner",
           "mvx_src_forced", "mvx_src_fallback", "mvx_src_rule", "mvx_acc", "mvx_unparsed")


def _per_question(folder: Path) -> dict[str, dict]:
    out = {}
    for s in samples(folder, "mvx_synth_seq"):
        rec = s["mvx_acc"]
        out[rec["id"]] = {"output": rec["raw_output"], "parsed": rec["parsed"], "agent_failed": rec["agent_failed"],
                          **{k: s[k] for k in FIGURES if k != "mvx_acc"}}
    return out


def _task_results(results: dict) -> dict:
    return {k: v for k, v in results["results"]["mvx_synth_seq"].items() if k.split(",")[0] in FIGURES}


@pytest.mark.slow
def test_use_cache_rerun_and_log_replay_keep_every_figure(tmp_path):
    """SAMA with an API planner (a local endpoint that charges tokens): one question answered by the
    planner, one from the evidence after a reply that names no option, one failed (HTTP 500). A rerun
    with the same --use_cache (SAMA asked only the failed question again) and a replay of the first
    run's samples log (no SAMA at all) give every per-question figure and every task figure of the first."""
    from fake_endpoint import FakeChatEndpoint, completion, error

    from mvx_tasks.synth import generate

    data = generate(tmp_path / "data", per_task=3, seed=2, tasks=["SEQ"], progress=False, workers=1)
    rows = [json.loads(line) for line in (data / "data.jsonl").read_text().splitlines()]
    first_option = {row["id"]: f"A. {row['options']['A']}" for row in rows}
    plan = dict(zip(first_option, ("letter", "prose", "down")))
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)

    def respond(body):
        text = json.dumps(body["messages"])
        qid = next(q for q, opt in first_option.items() if opt in text)
        if plan[qid] == "down":
            return error(500, "the server is down")
        content = "Answer: B" if plan[qid] == "letter" else "The clips look alike; I cannot tell."
        return 200, completion(content=content, prompt_tokens=1000, completion_tokens=100)

    cache, env = tmp_path / "lmms_cache", {"MVX_SYNTH_DATA": str(data), "SAMA_NOTES_TEST_KEY": "sk-test-1234"}
    with FakeChatEndpoint(respond) as ep:
        args = (f"profile=offline,planner=openai,model=local-model,base_url={ep.base_url},"
                f"api_key_env=SAMA_NOTES_TEST_KEY,planner.max_retries=0,planner.backoff=0.01,max_iterations=2,"
                f"prices={prices},cache_dir=none,workers=1")

        def run(name: str, model: str = "sama", model_args: str = args) -> tuple[dict, Path]:
            extra = ["--use_cache", str(cache)] if model == "sama" else []
            return run_lmms_eval(["--model", model, "--model_args", model_args, "--tasks", "mvx_synth_seq", *extra],
                                 tmp_path / name, env=env)

        res1, out1 = run("first")
        first = _per_question(out1)
        res2, out2 = run("cached")
    asked_again = sorted(p.stem for p in (tmp_path / "cached").rglob("sama_traces/*/*.json"))
    res3, out3 = run("replay", "mvx_replay", f"samples={out1}")

    # the first run has every kind of figure
    ids = [r["id"] for r in rows]
    assert first[ids[0]]["parsed"] == "B" and first[ids[0]]["mvx_src_planner"] == 1
    for qid in ids[:2]:  # 1,100 tokens and $0.002 per planner call
        calls = first[qid]["mvx_tokens"] / 1100
        assert calls >= 1 and calls == int(calls) and first[qid]["mvx_cost_usd"] == pytest.approx(0.002 * calls)
    assert first[ids[1]]["mvx_src_planner"] == 0
    assert first[ids[1]]["mvx_src_fallback"] + first[ids[1]]["mvx_src_rule"] + first[ids[1]]["mvx_src_forced"] == 1
    assert first[ids[2]]["output"] == "" and first[ids[2]]["mvx_agent_failed"] == 1
    assert first[ids[2]]["agent_failed"].startswith("planner unavailable")
    # lmms-eval served two answers from its cache (SAMA was asked only the failed question) ...
    assert asked_again == [ids[2]]
    # ... and the rerun and the replay keep every figure, per question and per task
    assert _per_question(out2) == first
    assert _per_question(out3) == first
    assert _task_results(res2) == _task_results(res1) == _task_results(res3)
    assert _task_results(res1)["mvx_tokens,none"] > 0 and _task_results(res1)["mvx_agent_failed,none"] == 1
    # the replay's own samples name no model call: lmms-eval's token counts are empty there
    assert all(s.get("token_counts") in (None, [None]) for s in samples(out3, "mvx_synth_seq"))


def test_replay_of_a_missing_log_says_what_to_pass(tmp_path):
    from mvx_tasks.replay import samples_files

    with pytest.raises(FileNotFoundError, match="--log_samples"):
        samples_files(str(tmp_path))
    (tmp_path / "20260101_000000_samples_mvx_synth_seq.jsonl").write_text("")
    (tmp_path / "20260102_000000_samples_mvx_synth_seq.jsonl").write_text("")
    assert samples_files(str(tmp_path))["mvx_synth_seq"].name.startswith("20260102")
    assert os.path.basename(samples_files(str(tmp_path / "20260101_000000_samples_mvx_synth_seq.jsonl"))[
        "mvx_synth_seq"]).startswith("20260101")


def test_replay_answers_from_the_log_and_flags_changed_data(tmp_path):
    from mvx_tasks.replay import Replay

    line = {"doc_id": 0, "filtered_resps": "Answer: B", "mvx_tokens": 2200.0, "mvx_cost_usd": 0.004,
            "mvx_iterations": 1.0, "mvx_tool_calls": 0.0, "mvx_src_planner": 1, "mvx_acc": {"id": "q1"}}
    log = tmp_path / "20261207_000000_samples_mvx_synth_seq.jsonl"
    log.write_text(json.dumps(line) + "\n")
    model = Replay(samples=str(tmp_path))
    model.task_dict = {"mvx_synth_seq": {"test": {0: DOC, 1: {**DOC, "id": "q9"}}}}
    reqs = [SimpleNamespace(args=("", None, {}, i, "mvx_synth_seq", "test")) for i in (0, 1)]
    out = model.generate_until(reqs)
    assert [o.text for o in out] == ["Answer: B", ""]
    assert note_for(DOC, "Answer: B") == AnswerNote(2200.0, 0.004, 1.0, 0.0, None, "planner")
    assert note_for({**DOC, "id": "q9"}, "").failure.startswith("replay: no logged answer for mvx_synth_seq doc 1")
    log.write_text(json.dumps({**line, "mvx_acc": {"id": "q7"}}) + "\n")  # the data changed under the log
    changed = Replay(samples=str(log))
    changed.task_dict = model.task_dict
    assert changed.generate_until(reqs[:1])[0].text == ""
    assert "is question q1, but the log's doc 0 is q7" in note_for(DOC, "").failure
    with pytest.raises(ValueError, match="unknown model argument"):
        Replay(samples=str(log), pretrained="x")
