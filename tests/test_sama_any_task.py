"""SAMA on video tasks that are not MVX-Bench, through the real lmms-eval CLI, like any MLLM.

Small local tasks in the shapes real benchmarks use (a Video-MME-like single-video MCQ, a
CVBench-like task with video_1..video_4 columns, an open-ended question, an image + video prompt,
a task with its own doc_to_messages), each built so the evidence decides: coloured squares whose
colour the question asks about. Run with the offline profile and with the LLM planner against a
local OpenAI-compatible server."""
from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from fixtures import write_video
from harness_run import run_lmms_eval, samples

pytestmark = pytest.mark.slow

COLOURS = {"red": (220, 30, 30), "green": (30, 190, 30), "blue": (30, 40, 220), "yellow": (230, 220, 30)}

UTILS = '''
import json


def visual(doc):
    return [doc[k] for k in ("video_1", "video_2", "video_3", "video_4") if doc.get(k)]


def mixed_visual(doc):
    from PIL import Image
    return [Image.open(doc["image"]).convert("RGB"), doc["video"]]


def text(doc, lmms_eval_specific_kwargs=None):
    return doc["prompt"]


def clip_messages(doc, lmms_eval_specific_kwargs=None):
    content = []
    for i, path in enumerate(doc["clips"], 1):
        content += [{"type": "text", "text": f"Clip {i}:"}, {"type": "video", "url": path}]
    content.append({"type": "text", "text": doc["prompt"]})
    return [{"role": "user", "content": content}]


def letter_result(doc, results):
    out = (results[0] or "").strip()
    pred = out.replace("Answer:", "").strip()[:1].upper()
    return {"acc": float(pred == doc["answer"])}


def text_result(doc, results):
    return {"acc": float(doc["answer"].lower() in (results[0] or "").lower())}
'''


def _yaml(name: str, visual: str | None, result: str, messages: str | None = None) -> str:
    lines = [f"task: {name}", "dataset_path: json", f"dataset_kwargs: {{data_files: {{test: {name}.jsonl}}}}",
             "test_split: test", "output_type: generate_until", "doc_to_text: !function utils.text",
             "doc_to_target: answer", "generation_kwargs: {max_new_tokens: 64, temperature: 0, do_sample: false}",
             f"process_results: !function utils.{result}",
             "metric_list:", "  - metric: acc", "    aggregation: mean", "    higher_is_better: true"]
    if visual:
        lines.append(f"doc_to_visual: !function utils.{visual}")
    if messages:
        lines.append(f"doc_to_messages: !function utils.{messages}")
    return "\n".join(lines) + "\n"


def _image(path: Path, colour: str) -> Path:
    from PIL import Image

    a = np.full((96, 96, 3), 90, np.uint8)
    a[30:60, 30:60] = COLOURS[colour]
    Image.fromarray(a).save(path)
    return path


@pytest.fixture(scope="module")
def tasks(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("any_tasks")
    vids = root / "videos"
    for c, rgb in COLOURS.items():
        write_video(vids / f"{c}.mp4", rgb, n_frames=16, size=96)
    v = {c: str(vids / f"{c}.mp4") for c in COLOURS}
    order = ["red", "green", "blue", "yellow"]
    rows = {
        # Video-MME-like: one video, options inline in the prompt
        "anyv_single": [{"video_1": v[c], "answer": "ABCD"[order.index(c)],
                         "prompt": "What colour is the square in the video?\nA. red\nB. green\nC. blue\nD. yellow\n"
                                   "Answer with the option's letter from the given choices directly."}
                        for c in ("red", "blue", "yellow")],
        # CVBench-like: 2 to 4 videos as columns, options name them
        "anyv_multi": [
            {"video_1": v["red"], "video_2": v["blue"], "answer": "B",
             "prompt": "Which video shows a blue square?\nA. Video 1\nB. Video 2\nAnswer with the option's letter."},
            {"video_1": v["green"], "video_2": v["red"], "video_3": v["yellow"], "answer": "C",
             "prompt": "Which video shows a yellow square?\n(A) Video 1\n(B) Video 2\n(C) Video 3\n"
                       "Answer with the option's letter."},
            {"video_1": v["blue"], "video_2": v["green"], "video_3": v["red"], "video_4": v["yellow"], "answer": "B",
             "prompt": "Which video shows a green square?\nA) Video 1\nB) Video 2\nC) Video 3\nD) Video 4\n"
                       "Answer with the option's letter."}],
        # open-ended: a short free-text target
        "anyv_open": [{"video_1": v[c], "answer": c,
                       "prompt": "What colour is the square in the video?\nAnswer with a single word."}
                      for c in ("green", "blue")],
        # an image and a video in one prompt
        "anyv_mixed": [{"image": str(_image(root / "green.png", "green")), "video": v["red"], "answer": "B",
                        "prompt": "Which one shows a red square?\nA: Image 1\nB: Video 1\nAnswer with the letter."},
                       {"image": str(_image(root / "yellow.png", "yellow")), "video": v["blue"], "answer": "A",
                        "prompt": "Which one shows a yellow square?\nA: Image 1\nB: Video 1\nAnswer with the letter."}],
        # the task's own doc_to_messages labels the clips
        "anyv_clips": [{"clips": [v["yellow"], v["green"]], "answer": "B",
                        "prompt": "Which clip shows a green square?\nA. Clip 1\nB. Clip 2"}],
    }
    spec = {"anyv_single": ("visual", "letter_result", None), "anyv_multi": ("visual", "letter_result", None),
            "anyv_open": ("visual", "text_result", None), "anyv_mixed": ("mixed_visual", "letter_result", None),
            "anyv_clips": (None, "letter_result", "clip_messages")}
    (root / "utils.py").write_text(textwrap.dedent(UTILS))
    for name, docs in rows.items():
        (root / f"{name}.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
        (root / f"{name}.yaml").write_text(_yaml(name, *spec[name]))
    return root


TASKS = ["anyv_single", "anyv_multi", "anyv_open", "anyv_mixed", "anyv_clips"]


def _run(tasks: Path, out: Path, model_args: str) -> tuple[dict, Path]:
    return run_lmms_eval(["--model", "sama", "--model_args", model_args, "--include_path", str(tasks),
                          "--tasks", ",".join(TASKS), "--batch_size", "1"], out)


def test_offline_profile_answers_every_shape(tasks, tmp_path):
    results, folder = _run(tasks, tmp_path / "out", f"profile=offline,workers=2,cache_dir={tmp_path / 'cache'}")
    accs = {t: results["results"][t]["acc,none"] for t in TASKS}
    assert accs == {t: 1.0 for t in TASKS}, accs
    outs = {t: [s["filtered_resps"] for s in samples(folder, t)] for t in TASKS}
    assert all(o.startswith("Answer: ") for o in outs["anyv_single"] + outs["anyv_multi"])
    assert outs["anyv_open"] == ["green", "blue"]  # free text, one word as the task asks
    traces = {json.loads(p.read_text())["question"]["id"]: json.loads(p.read_text())
              for p in (tmp_path / "out").rglob("sama_traces/*/*.json")}
    clip = next(t for t in traces.values() if t["question"]["question"].startswith("Which clip"))
    assert [v["label"] for v in clip["question"]["videos"]] == ["Clip 1", "Clip 2"]
    mixed = next(t for t in traces.values() if t["question"]["question"].startswith("Which one shows a yellow"))
    assert [v["label"] for v in mixed["question"]["videos"]] == ["Image 1", "Video 1"]
    assert mixed["question"]["videos"][0]["path"].endswith(".mp4")  # the image became a still clip
    four = next(t for t in traces.values() if "green square?" in t["question"]["question"]
                and len(t["question"]["videos"]) == 4)
    assert four["question"]["options"] == {"A": "Video 1", "B": "Video 2", "C": "Video 3", "D": "Video 4"}
    assert all(t["status"] == "finished" for t in traces.values())


def _planner_server():
    """A local OpenAI-compatible server whose replies follow a fixed reading rule: first ask the video
    reader the question about every video, then answer from what it said (an option whose text, or
    whose video's evidence, names the colour asked about; for open-ended questions the colour read)."""
    from fake_endpoint import FakeChatEndpoint, completion

    def respond(body):
        msgs = body["messages"]
        text = "\n".join(m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
                         for m in msgs if m.get("content"))
        user = next(m["content"] for m in msgs if m["role"] == "user")
        labels = re.search(r"Videos: (.+)\.", user).group(1).split(", ")
        question = re.search(r"Question: (.+)", user).group(1)
        said = {}
        for lb in labels:  # the reader's evidence, as the planner is shown it (memory or raw tool results)
            m = re.search(re.escape(lb) + r" \(whole video[^)]*\) 'Describe the video\.': ([^\n\"]+)", text)
            if m:
                said[lb] = m.group(1)
        if len(said) < len(labels):
            return 200, completion(tool_calls=[("video_reader", {"video": lb, "query": "Describe the video."})
                                               for lb in labels])
        colours = [c for c in COLOURS if re.search(rf"\b{c}\b", question)]
        options = dict(re.findall(r"^([A-Z])\. (.+)$", user, re.M))
        if not options:
            found = [c for c in COLOURS if re.search(rf"\b{c} square", " ".join(said.values()))]
            return 200, completion(tool_calls=[("final_answer", {"answer": found[0] if found else "unknown"})])
        for letter, opt in options.items():
            if opt in said and colours and re.search(rf"\b{colours[0]} square", said[opt]):
                return 200, completion(tool_calls=[("final_answer", {"answer": letter})])
            if opt in COLOURS and re.search(rf"\b{opt} square", " ".join(said.values())):
                return 200, completion(tool_calls=[("final_answer", {"answer": letter})])
        return 200, completion(tool_calls=[("final_answer", {"answer": "A"})])

    return FakeChatEndpoint(respond)


def test_llm_planner_answers_every_shape(tasks, tmp_path):
    with _planner_server() as ep:
        args = (f"profile=offline,planner=openai,model=local,base_url={ep.base_url},api_key_env=NO_KEY_HERE,"
                f"workers=2,cache_dir={tmp_path / 'cache'}")
        results, folder = _run(tasks, tmp_path / "out", args)
    accs = {t: results["results"][t]["acc,none"] for t in TASKS}
    assert accs == {t: 1.0 for t in TASKS}, accs
    traces = [json.loads(p.read_text()) for p in (tmp_path / "out").rglob("sama_traces/*/*.json")]
    assert len(traces) == 11 and all(t["status"] == "finished" for t in traces)
    assert {s["source"] for t in traces for s in t["steps"] if s["kind"] == "final"} == {"planner"}
    opened = [t for t in traces if not t["question"]["options"]]
    assert sorted(t["output"] for t in opened) == ["blue", "green"]


def test_bad_requests_fail_alone(tasks, tmp_path):
    """A message with no video, a missing video file, options that skip letters, another language and a
    20-video question: each answered or failed alone, with the reason in its trace."""
    v = str(tasks / "videos" / "red.mp4")
    rows = [{"video_1": None, "answer": "A", "prompt": "What colour?\nA. red\nB. blue"},
            {"video_1": str(tasks / "videos" / "missing.mp4"), "answer": "A", "prompt": "What colour?\nA. red\nB. blue"},
            {"video_1": v, "answer": "A", "prompt": "What colour is the square?\nA. red\nC. blue\nE. green"},
            {"video_1": v, "answer": "A", "prompt": "¿De qué color es el cuadrado?\nA. rojo (red)\nB. azul (blue)"},
            {"videos": [v] * 20, "answer": "A", "prompt": "Which video shows a red square?\nA. Video 1\nB. none"}]
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "utils.py").write_text(textwrap.dedent(UTILS) + textwrap.dedent('''
        def many(doc):
            return doc.get("videos") or [x for x in [doc.get("video_1")] if x]
        '''))
    (folder / "anyv_bad.jsonl").write_text("".join(json.dumps(d) + "\n" for d in rows))
    (folder / "anyv_bad.yaml").write_text(_yaml("anyv_bad", "many", "letter_result"))
    results, out = run_lmms_eval(["--model", "sama", "--model_args", f"profile=offline,cache_dir={tmp_path / 'c'}",
                                  "--include_path", str(folder), "--tasks", "anyv_bad", "--batch_size", "1"],
                                 tmp_path / "out")
    traces = sorted((json.loads(p.read_text()) for p in (tmp_path / "out").rglob("sama_traces/*/*.json")),
                    key=lambda t: int(t["question"]["id"].rsplit("-", 1)[1]))
    assert [t["status"] for t in traces] == ["failed", "failed", "finished", "finished", "finished"]
    assert "no video or image" in traces[0]["failure"]
    assert "missing.mp4" in traces[1]["failure"]
    assert list(traces[2]["question"]["options"]) == ["A", "C", "E"]
    assert len(traces[4]["question"]["videos"]) == 20
    outs = [s["filtered_resps"] for s in samples(out, "anyv_bad")]
    assert outs[0] == outs[1] == ""  # failures are empty, never answer-like
    assert results["results"]["anyv_bad"]["acc,none"] >= 0.4


def test_probe_through_sama_sees_every_video(tmp_path):
    """``mvx-bench probe --model sama``: the background colour of the named video, at every position."""
    import os
    import subprocess
    import sys

    mvx = Path(sys.executable).with_name("mvx-bench")
    proc = subprocess.run([str(mvx), "probe", "--model", "sama", "--model_args",
                           f"profile=offline,workers=2,cache_dir={tmp_path / 'cache'}", "--output", str(tmp_path / "p")],
                          capture_output=True, text=True, timeout=900, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "verdict: sees every video" in proc.stdout
    for pos in range(1, 6):
        assert f"asked about video {pos}: 100.0% correct" in proc.stdout


def _vlmeval_dataset(root: Path, name: str):
    """A small non-MVX VLMEvalKit video MCQ dataset (Video-MME-like prompt: the video, then the
    question with its options)."""
    import pandas as pd
    from vlmeval.dataset.video_base import VideoBaseDataset

    rows = [{"index": i, "video": c, "question": "What colour is the square in the video?",
             "candidates": json.dumps(["red", "green", "blue", "yellow"]), "answer": "ABCD"[k]}
            for i, (k, c) in enumerate([(0, "red"), (2, "blue"), (1, "green"), (3, "yellow")])]
    tsv = root / f"{name}.tsv"
    pd.DataFrame(rows).to_csv(tsv, sep="\t", index=False)

    class ColourQA(VideoBaseDataset):
        TYPE = "Video-MCQ"

        def prepare_dataset(self, dataset):
            return {"root": str(root / "videos"), "data_file": str(tsv)}

        def build_prompt(self, line, video_llm):
            line = self.data.iloc[line] if isinstance(line, int) else line
            opts = "\n".join(f"{'ABCD'[i]}. {c}" for i, c in enumerate(json.loads(line["candidates"])))
            return [{"type": "video", "value": str(root / "videos" / f"{line['video']}.mp4")},
                    {"type": "text", "value": f"Question: {line['question']}\n{opts}\n"
                                              "Answer with the option's letter from the given choices directly."}]

        def evaluate(self, eval_file, **judge_kwargs):  # pragma: no cover - not used here
            raise NotImplementedError

    return ColourQA(dataset=name)


@pytest.mark.parametrize("planner", ["scripted", "openai"])
def test_vlmeval_answers_a_non_mvx_video_dataset(tasks, tmp_path, monkeypatch, planner):
    from vlmeval.inference_video import infer_data_job_video
    from vlmeval.smp import load

    from vlmeval.api.base import BaseAPI
    from vlmeval.vlm.base import BaseModel

    from sama_model.adapters.vlmeval_model import build_model

    monkeypatch.setenv("LMUData", str(tmp_path / "lmu"))
    ds = _vlmeval_dataset(tasks, "ColourQA")
    args = dict(profile="offline", trace_dir=str(tmp_path / "traces"), cache_dir=str(tmp_path / "cache"))
    server = _planner_server() if planner == "openai" else None
    if server:
        server.__enter__()
        args.update(planner="openai", model="local", base_url=server.base_url, api_key_env="NO_KEY_HERE")
    try:
        model = build_model(**args)  # what VLMEvalKit's supported_VLM entries call
        assert model.is_api is (planner == "openai")  # an API-bound planner takes VLMEvalKit's threaded API path
        assert isinstance(model, BaseAPI if planner == "openai" else BaseModel)
        work = tmp_path / "work"
        work.mkdir()
        result = work / "SAMA_ColourQA.xlsx"
        infer_data_job_video(model, str(work), "SAMA", ds, result_file=str(result), api_nproc=2)
    finally:
        if server:
            server.__exit__(None, None, None)
    data = load(str(result))
    assert [str(p).replace("Answer:", "").strip() for p in data["prediction"]] == list(data["answer"])
    assert len(list((tmp_path / "traces").glob("*.json"))) == 4
