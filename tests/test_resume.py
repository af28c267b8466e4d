"""Resume is keyed on content: a finished trace stands in for a question only when the question,
its videos and subtitles, the configuration and the code revision are all the same."""
from __future__ import annotations

import dataclasses
import json
import os

import pytest

import test_sama_doubles as D
from fixtures import write_video
from sama_model.agent import SamaAgent
from sama_model.atomic import OutputWriteError, check_writable
from sama_model.cache import ToolCache
from sama_model.profiles import build_config
from sama_model.resume import EDGE_BYTES, ResumeKey, question_digest, quick_file_hash
from sama_model.runner import RunStats, run_questions
from sama_model.trace import load_trace

from test_sama_doubles import CUPS_OPTIONS as OPTIONS, CUPS_Q as Q, CUPS_SCRIPT as SCRIPT, CUPS_STEMS as STEMS  # noqa: E402


@pytest.fixture()
def question(tmp_path):
    D.reset(SCRIPT)
    return D.make_question(tmp_path, "q1", "CNT", Q, OPTIONS, STEMS)


def agent(**args) -> SamaAgent:
    return SamaAgent(build_config(**{**D.DOUBLE_ARGS, **args}))


def go(a: SamaAgent, questions, tdir) -> tuple[list[str], RunStats]:
    stats = RunStats()
    return run_questions(a, questions, tdir, workers=2, progress=False, stats=stats), stats


def test_same_question_resumes_and_trace_stores_its_key(tmp_path, question):
    a = agent()
    out1, s1 = go(a, [question], tmp_path / "t")
    assert out1 == ["Answer: C"] and (s1.answered, s1.resumed, s1.changed) == (1, 0, 0)
    assert s1.reasons == {"new": 1}
    stored = load_trace(tmp_path / "t" / "q1.json")["resume_key"]
    assert stored == ResumeKey.of(question, a.fingerprint).to_dict()
    out2, s2 = go(a, [question], tmp_path / "t")
    assert out2 == out1 and (s2.answered, s2.resumed) == (0, 1)
    assert "1 resumed from finished traces" in s2.summary()


def test_same_id_other_question_is_recomputed(tmp_path, question):
    """The reported collision: MVX-Synth seed 0 then seed 7 (same ids, other questions) in one folder."""
    a = agent()
    go(a, [question], tmp_path / "t")
    other = dataclasses.replace(question, options={**OPTIONS, "D": "Video D (the last one)"})
    _, s = go(a, [other], tmp_path / "t")
    assert (s.answered, s.resumed, s.changed) == (1, 0, 1) and s.reasons == {"changed:question": 1}
    assert "1 recomputed because they changed (question: 1)" in s.summary()
    assert load_trace(tmp_path / "t" / "q1.json")["question"]["options"]["D"] == "Video D (the last one)"
    # and a third run with the second question resumes it
    _, s3 = go(a, [other], tmp_path / "t")
    assert (s3.answered, s3.resumed) == (0, 1)


def test_changed_video_file_is_recomputed(tmp_path, question):
    a = agent()
    go(a, [question], tmp_path / "t")
    before = quick_file_hash(tmp_path / "videos" / "b.mp4")
    write_video(tmp_path / "videos" / "b.mp4", color=(1, 2, 3), n_frames=9)  # same path, new content
    assert quick_file_hash(tmp_path / "videos" / "b.mp4") != before
    _, s = go(a, [question], tmp_path / "t")
    assert (s.answered, s.changed) == (1, 1) and s.reasons == {"changed:question": 1}


def test_changed_subtitle_is_recomputed(tmp_path):
    D.reset(SCRIPT)
    q = D.make_question(tmp_path, "q1", "CNT", Q, OPTIONS, STEMS, subtitles={"Video A": "1\n00:00:00,000 --> 00:00:01,000\nhello\n"})
    a = agent()
    go(a, [q], tmp_path / "t")
    (tmp_path / "videos" / "a.srt").write_text("1\n00:00:00,000 --> 00:00:01,000\ngoodbye\n", encoding="utf-8")
    _, s = go(a, [q], tmp_path / "t")
    assert s.reasons == {"changed:question": 1}


def test_package_version_change_invalidates(tmp_path, question, monkeypatch):
    import sama_model

    a = agent()
    go(a, [question], tmp_path / "t")
    monkeypatch.setattr(sama_model, "__version__", sama_model.__version__ + ".post1")
    _, s = go(a, [question], tmp_path / "t")
    assert (s.answered, s.changed) == (1, 1) and s.reasons == {"changed:revision": 1}


def test_tool_cache_revision_change_invalidates(tmp_path, question, monkeypatch):
    import sama_model.cache as cache_module

    a = agent()
    go(a, [question], tmp_path / "t")
    monkeypatch.setattr(cache_module, "CACHE_REVISION", cache_module.CACHE_REVISION + 1)
    _, s = go(a, [question], tmp_path / "t")
    assert s.reasons == {"changed:revision": 1}


def test_trace_without_key_and_failed_trace_are_recomputed(tmp_path, question):
    a = agent()
    tdir = tmp_path / "t"
    tdir.mkdir()
    # a trace written by an older release (no resume key) must not be trusted
    (tdir / "q1.json").write_text(json.dumps({"status": "finished", "fingerprint": a.fingerprint, "output": "Answer: A"}))
    out, s = go(a, [question], tdir)
    assert out == ["Answer: C"] and s.reasons == {"changed:question,fingerprint,revision": 1}
    data = load_trace(tdir / "q1.json")
    data["status"], data["output"] = "failed", ""
    (tdir / "q1.json").write_text(json.dumps(data))
    out, s = go(a, [question], tdir)
    assert out == ["Answer: C"] and (s.retried, s.reasons) == (1, {"failed": 1})
    (tdir / "q1.json").write_text('{"status": "finish')  # cut off mid-write by an older, non-atomic writer
    _, s = go(a, [question], tdir)
    assert s.reasons == {"unreadable": 1}


def test_quick_hash_reads_both_ends_of_a_large_file(tmp_path):
    p = tmp_path / "big.bin"
    p.write_bytes(b"\0" * (3 * EDGE_BYTES))
    h0 = quick_file_hash(p)
    with p.open("r+b") as fh:
        fh.seek(3 * EDGE_BYTES - 10)
        fh.write(b"x")
    os.utime(p, ns=(1, 1))  # a new mtime, so the memo does not answer
    h1 = quick_file_hash(p)
    assert h1 != h0
    assert quick_file_hash(tmp_path / "nope.mp4") == "missing"


def test_corrupt_cache_entry_is_detected_and_recomputed(tmp_path):
    cache = ToolCache(tmp_path / "cache")
    key = "ab" + "0" * 62
    cache.put(key, {"data": {"count": 2}})
    assert cache.get(key) == {"data": {"count": 2}}
    path = tmp_path / "cache" / "ab" / f"{key}.json"
    entry = json.loads(path.read_text())
    # valid JSON whose value no longer matches its checksum (bit rot, a hand edit)
    entry["value"]["data"]["count"] = 3
    path.write_text(json.dumps(entry))
    assert cache.get(key) is None
    path.write_text(path.read_text()[:20])  # truncated
    assert cache.get(key) is None
    # another entry's file under this key's name
    cache.put("cd" + "0" * 62, {"data": {}})
    path.write_text((tmp_path / "cache" / "cd" / ("cd" + "0" * 62 + ".json")).read_text())
    assert cache.get(key) is None
    assert cache.stats() == {"hits": 1, "misses": 3, "corrupt": 3, "write_errors": 0}
    cache.put(key, {"data": {"count": 2}})  # the recomputed value replaces it
    assert cache.get(key) == {"data": {"count": 2}}


def test_output_that_is_a_file_is_reported_with_path_and_fix(tmp_path, question):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    with pytest.raises(OutputWriteError) as err:
        run_questions(agent(), [question], blocker / "traces", progress=False)
    assert str(blocker / "traces") in str(err.value) and "trace_dir=" in str(err.value)
    with pytest.raises(OutputWriteError, match="cache_dir="):
        ToolCache(blocker / "cache")
    assert D.CALLS == {} or sum(D.CALLS.values()) == 0  # no question ran


def test_first_failed_trace_write_stops_the_run_with_the_path(tmp_path, question, monkeypatch):
    """A disk that fills mid-run: the first failed write stops the run, naming the path and the fix;
    queued questions are not started."""
    import errno

    import sama_model.trace as trace_module

    def full(path, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(trace_module, "atomic_write_text", full)
    qs = [dataclasses.replace(question, id=f"q{i}") for i in range(6)]
    with pytest.raises(OutputWriteError, match="No space left on device") as err:
        run_questions(agent(), qs, tmp_path / "t", workers=1, progress=False)
    assert "q0.json" in str(err.value) and "free space" in str(err.value)


def test_check_writable_creates_the_folder(tmp_path):
    assert check_writable(tmp_path / "a" / "b", "x", "fix").is_dir()
    assert list((tmp_path / "a" / "b").iterdir()) == []


def test_two_synth_seeds_into_one_folder_recompute_every_question(tmp_path):
    """As reported: MVX-Synth SPR of seed 0, then of seed 7 (same ids, other questions), one trace folder,
    offline profile. The second run must answer seed 7's questions, not replay seed 0's answers."""
    from mvx_tasks.data import load_local
    from mvx_tasks.synth import generate
    from sama_model.question import AgentQuestion

    def questions(seed):
        folder = generate(tmp_path / f"seed{seed}", per_task=2, seed=seed, tasks=["SPR"], progress=False, workers=1)
        return [AgentQuestion.from_sample(s, root=str(folder)) for s in load_local(folder)]

    q0, q7 = questions(0), questions(7)
    assert [q.id for q in q0] == [q.id for q in q7]
    assert all(question_digest(a) != question_digest(b) for a, b in zip(q0, q7))  # other videos
    a = SamaAgent(build_config(profile="offline", cache_dir="none"))
    go(a, q0, tmp_path / "traces")
    out7, s7 = go(a, q7, tmp_path / "traces")
    assert (s7.resumed, s7.changed, s7.answered) == (0, 2, 2)
    fresh, _ = go(a, q7, tmp_path / "fresh")  # the same questions in a clean folder
    assert out7 == fresh
