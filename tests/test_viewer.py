"""`mvx-bench view` on real runs, checked in a real headless browser.

Two real lmms-eval runs on the same small MVX-Synth (FD and AM, 2 questions each): SAMA with the
offline profile, and the built-in qwen2_5_vl adapter on a tiny random Qwen2.5-VL (a baseline).
The site is built with the SAMA run compared against the baseline, then opened in Debian's
Chromium through Selenium: per-task numbers, a filter, a question page's filmstrips and tool
calls, and the compare page's flipped questions are checked against the runs' own files.
Screenshots land in tests/artifacts/viewer/.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from browser import chromium_missing, full_screenshot, quit_chromium, start_chromium
from harness_run import run_lmms_eval, samples

pytestmark = pytest.mark.slow
TASKS = ["FD", "AM"]
ARTIFACTS = Path(__file__).parent / "artifacts" / "viewer"


def _records(out: Path) -> dict[str, dict]:
    return {s["mvx_acc"]["id"]: s["mvx_acc"] for c in TASKS for s in samples(out, f"mvx_synth_{c.lower()}")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    pytest.importorskip("torchvision")
    from mvx_tasks.synth import generate
    from tiny_models import build_tiny_qwen2_5_vl

    root = tmp_path_factory.mktemp("viewer")
    data = generate(root / "synth", per_task=2, seed=4, tasks=TASKS, progress=False, workers=1)
    tasks = ",".join(f"mvx_synth_{c.lower()}" for c in TASKS)
    env = {"MVX_SYNTH_DATA": str(data)}
    _, sama_out = run_lmms_eval(["--model", "sama", "--model_args", f"profile=offline,workers=2,cache_dir={root / 'cache'}",
                                 "--tasks", tasks, "--batch_size", "1"], root / "sama", env=env)
    qwen = build_tiny_qwen2_5_vl(root / "tiny-qwen2.5-vl")
    margs = f"pretrained={qwen},attn_implementation=sdpa,device=cpu,device_map=cpu,max_num_frames=4"
    _, qwen_out = run_lmms_eval(["--model", "qwen2_5_vl", "--model_args", margs, "--tasks", tasks, "--batch_size", "1",
                                 "--gen_kwargs", "max_new_tokens=4"], root / "qwen", env=env)
    return {"root": root, "data": data, "sama": root / "sama", "qwen": root / "qwen"}


@pytest.fixture(scope="module")
def site(runs):
    """The SAMA run's site, compared with the baseline, built through the real console script."""
    out = runs["root"] / "site"
    proc = subprocess.run([sys.executable, "-m", "mvx_tasks.cli", "view", str(runs["sama"]), "--compare",
                           str(runs["qwen"]), "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 questions (SAMA agent run)" in proc.stdout
    return out


@pytest.fixture(scope="module")
def browser():
    why = chromium_missing()
    if why:
        pytest.skip(why)
    d = start_chromium()
    yield d
    quit_chromium(d)


def _open(driver, path: Path):
    driver.set_window_size(1280, 900)
    driver.get(path.resolve().as_uri())


def test_run_page_shows_the_runs_per_task_numbers(site, runs, browser):
    from selenium.webdriver.common.by import By

    recs = _records(runs["sama"])
    results = json.loads(next(runs["sama"].rglob("*_results.json")).read_text())["results"]
    _open(browser, site / "index.html")
    for code in TASKS:
        rs = [r for r in recs.values() if r["task"] == code]
        row = browser.find_element(By.CSS_SELECTOR, f"#per-task tr[data-task='{code}']")
        cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
        acc = 100 * sum(r["correct"] for r in rs) / len(rs)
        assert cells[4] == f"{acc:.1f}" == f"{results[f'mvx_synth_{code.lower()}']['mvx_acc,none']:.1f}"
        assert cells[3] == str(len(rs))
        assert row.find_element(By.CSS_SELECTOR, ".chance").text == f"{100 * sum(r['chance'] for r in rs) / len(rs):.1f}"
        assert row.find_element(By.CSS_SELECTOR, ".unparsed").text == str(sum(r["unparsed"] for r in rs))
        assert row.find_element(By.CSS_SELECTOR, ".failed").text == str(sum(bool(r["failed"]) for r in rs))
    overall = browser.find_element(By.CSS_SELECTOR, "#per-task tr[data-task='overall'] .acc").text
    assert overall == f"{100 * sum(r['correct'] for r in recs.values()) / len(recs):.1f}"
    # answer sources: every SAMA question's final step names one; the columns add up to the questions
    header = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#per-task tr:first-child th")]
    assert "planner" in header
    assert browser.find_element(By.ID, "paper-rows").find_elements(By.TAG_NAME, "tr")[1].text.startswith("sama")
    full_screenshot(browser, ARTIFACTS / "run.png")


def test_filter_narrows_the_list_to_the_expected_ids(site, runs, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    recs = _records(runs["sama"])
    _open(browser, site / "questions.html")
    shown = lambda: [r.get_attribute("data-id") for r in browser.find_elements(By.CSS_SELECTOR, "#qlist tbody tr")]
    assert sorted(shown()) == sorted(recs)
    Select(browser.find_element(By.ID, "f-task")).select_by_value("FD")
    assert sorted(shown()) == sorted(i for i, r in recs.items() if r["task"] == "FD")
    for status in ("correct", "wrong"):
        Select(browser.find_element(By.ID, "f-status")).select_by_value(status)
        want = sorted(i for i, r in recs.items() if r["task"] == "FD" and r["correct"] == (status == "correct"))
        assert sorted(shown()) == want
    Select(browser.find_element(By.ID, "f-status")).select_by_value("")
    Select(browser.find_element(By.ID, "f-task")).select_by_value("")
    browser.find_element(By.ID, "f-search").send_keys("am-0001")
    assert shown() == ["synth-am-0001"]
    full_screenshot(browser, ARTIFACTS / "list.png")
    # the filter lives in the URL: a link to a filtered list opens filtered
    _open(browser, site / "questions.html")
    browser.get((site / "questions.html").resolve().as_uri() + "#task=AM")
    browser.refresh()
    assert sorted(shown()) == sorted(i for i, r in recs.items() if r["task"] == "AM")


def _expected_frames(trace: dict, label: str) -> int:
    """Distinct frames the trace's tool calls looked at in one video, from their recorded timestamps."""
    from mvx_tasks.video_decoder import load_video

    times = set()
    for s in trace["steps"]:
        if s["kind"] != "tool" or s["error"] or label not in [s["args"].get(k) for k in ("video", "video_a", "video_b")]:
            continue
        ts = s["data"].get("frame_times") or [f["t"] for f in s["data"].get("frames", [])]
        if not ts:  # a result without timestamps: n frames spread over its window
            v = next(v for v in trace["question"]["videos"] if v["label"] == label)
            _, ts = load_video(v["path"]).sample(s["data"].get("frames_used") or s["args"].get("n_frames") or 8,
                                                 s["args"].get("start"), s["args"].get("end"))
        times.update(round(float(t), 3) for t in ts)
    return len(times)


def test_question_page_shows_a_filmstrip_per_video_and_the_tool_calls(site, runs, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    [trace_file] = [f for f in runs["sama"].rglob("synth-fd-0000.json")]
    trace = json.loads(trace_file.read_text())
    labels = [v["label"] for v in trace["question"]["videos"]]
    _open(browser, site / "q" / "synth-fd-0000.html")
    strips = browser.find_elements(By.CSS_SELECTOR, ".filmstrip")
    assert [s.get_attribute("data-video") for s in strips] == labels
    for strip, label in zip(strips, labels):
        figs = strip.find_elements(By.TAG_NAME, "figure")
        want = _expected_frames(trace, label)
        assert want > 0 and len(figs) == want, (label, len(figs), want)
        for img in strip.find_elements(By.TAG_NAME, "img"):  # real, decodable thumbnails (lazy: scroll to them)
            browser.execute_script("arguments[0].scrollIntoView()", img)
            WebDriverWait(browser, 10).until(
                lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", img))
        assert re.fullmatch(r"\d+\.\d\ds · .+", figs[0].text)
    calls = [(s["call_id"], s["tool"]) for s in trace["steps"] if s["kind"] == "tool"]
    shown = [(d.get_attribute("data-call"), d.get_attribute("data-tool"))
             for d in browser.find_elements(By.CSS_SELECTOR, "#steps .step.tool")]
    assert shown == calls and calls
    final = next(s for s in trace["steps"] if s["kind"] == "final")
    assert browser.find_element(By.CSS_SELECTOR, "#final-step .source").text == final["source"]
    assert browser.find_element(By.ID, "memory").text.strip()
    full_screenshot(browser, ARTIFACTS / "question.png")


def test_compare_page_lists_exactly_the_flipped_questions(site, runs, browser):
    from selenium.webdriver.common.by import By

    a, b = _records(runs["sama"]), _records(runs["qwen"])
    flipped = sorted(i for i in a if i in b and a[i]["correct"] != b[i]["correct"])
    _open(browser, site / "compare.html")
    rows = browser.find_elements(By.CSS_SELECTOR, "#flips tr.flip")
    assert sorted(r.get_attribute("data-id") for r in rows) == flipped
    for r in rows:
        qid = r.get_attribute("data-id")
        assert r.get_attribute("data-direction") == ("lost" if a[qid]["correct"] else "gained")
    assert browser.find_element(By.ID, "n-flips").text == str(len(flipped))
    full_screenshot(browser, ARTIFACTS / "compare.png")


def test_baseline_run_gets_list_and_question_pages_without_agent_parts(runs, browser, tmp_path):
    from selenium.webdriver.common.by import By

    from mvx_tasks.viewer import build_site

    info = build_site(runs["qwen"], tmp_path / "site", data=runs["data"])
    assert info["agent"] is False and info["questions"] == 4
    recs = _records(runs["qwen"])
    _open(browser, tmp_path / "site" / "questions.html")
    rows = browser.find_elements(By.CSS_SELECTOR, "#qlist tbody tr")
    assert sorted(r.get_attribute("data-id") for r in rows) == sorted(recs)
    assert {r.find_elements(By.TAG_NAME, "td")[5].text for r in rows} == {"model"}
    _open(browser, tmp_path / "site" / "q" / "synth-fd-0000.html")
    assert not browser.find_elements(By.CSS_SELECTOR, ".filmstrip, #steps")
    assert browser.find_element(By.ID, "question-text").text.startswith("One of these two videos")
    raw = browser.find_element(By.CSS_SELECTOR, "#decision code").text
    assert raw == recs["synth-fd-0000"]["raw_output"].strip()  # model output shown as text, escaped
    full_screenshot(browser, ARTIFACTS / "baseline_question.png")


def test_untrusted_text_is_escaped(tmp_path):
    """A model output or question with markup is shown as text, never injected."""
    from mvx_tasks.viewer.build import Question, Run
    from mvx_tasks.viewer.question_page import question_page

    rec = {"id": "x<1>", "task": "FD", "raw_output": "<script>alert(1)</script><img src=x onerror=alert(2)>",
           "parsed": None, "answer": "A", "correct": False, "unparsed": True, "failed": None}
    q = Question("x<1>", "FD", rec, doc={"question": "<b>bold?</b>", "options": {"A": "<i>a</i>", "B": "b"}})
    run = Run(path="r.json", name="<run>", model="m", model_args={}, benchmark="MVX-Bench", results={},
              questions={q.id: q})
    page = question_page(q, run, None, False)
    assert "<script>alert" not in page and "<img src=x" not in page and "<b>bold" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_compare_page_says_which_flipped_answers_the_agent_marked_fragile():
    """Two agent runs (traces) and a baseline (none): each flipped row carries the final reasons' marks,
    yes / no for an agent, a dash for the baseline."""
    from mvx_tasks.viewer.build import Question, Run
    from mvx_tasks.viewer.run_pages import compare_page
    from sama_model.skills.multi_video_comparison.common import marked_fragile  # what the agent records

    def run(name: str, answers: dict[str, tuple[str, str | None]]) -> Run:
        qs = {}
        for qid, (parsed, reason) in answers.items():
            rec = {"id": qid, "task": "CNT", "parsed": parsed, "answer": "A", "correct": parsed == "A",
                   "unparsed": False, "failed": None}
            trace = None if reason is None else {"steps": [{"kind": "final", "letter": parsed, "reason": reason,
                                                            "source": "planner", "fragile": marked_fragile(reason)}]}
            qs[qid] = Question(qid, "CNT", rec, doc={"question": "?", "options": {"A": "a", "B": "b"}}, trace=trace)
        return Run(path=f"{name}.json", name=name, model="m", model_args={}, benchmark="MVX-Bench", results={},
                   questions=qs)

    crf20 = run("crf20", {"q1": ("A", "count match; fragile: one count off changes the answer (...)"),
                          "q2": ("A", "count match"), "q3": ("B", "count match")})
    crf30 = run("crf30", {"q1": ("B", "count match"), "q2": ("B", "count match; fragile: one count off ..."),
                          "q3": ("B", "count match")})
    page = compare_page(crf20, crf30, "crf30.json")
    rows = dict(re.findall(r'<tr class="flip" data-id="([^"]+)" data-direction="[a-z]+" data-fragile="([^"]+)">', page))
    assert rows == {"q1": "yes/no", "q2": "no/yes"}  # q3 is wrong in both: not a flip
    baseline = run("qwen", {"q1": ("B", None), "q2": ("B", None)})
    rows = dict(re.findall(r'data-id="([^"]+)" data-direction="[a-z]+" data-fragile="([^"]+)"',
                           compare_page(crf20, baseline, "qwen.json")))
    assert rows == {"q1": "yes/\u2013", "q2": "no/\u2013"}
