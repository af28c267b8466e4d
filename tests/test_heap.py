"""A long run's heap: two malloc arenas, and freed memory back to the OS once per answered question
(sama_model/heap.py)."""
from __future__ import annotations

import test_sama_doubles as D
from sama_model import heap, runner
from sama_model.agent import SamaAgent
from sama_model.profiles import build_config

Q = "Which video has the same number of cups as the reference video?"


def test_the_runner_releases_free_heap_after_every_question(tmp_path, monkeypatch):
    D.reset({"ref": {"sg": 2}, "a": {"sg": 1}, "b": {"sg": 2}})
    stems = {"Reference": "ref", "Video A": "a", "Video B": "b"}
    qs = [D.make_question(tmp_path, f"q{i}", "CNT", Q, {"A": "Video A", "B": "Video B"}, stems) for i in range(3)]
    calls, limited = [], []
    monkeypatch.setattr(runner, "release_free_heap", lambda: calls.append(1) or True)
    monkeypatch.setattr(runner, "limit_arenas", lambda: limited.append(1) or True)
    agent = SamaAgent(build_config(**D.DOUBLE_ARGS, cache_dir="none"))
    assert runner.run_questions(agent, qs, tmp_path / "t", workers=2, progress=False) == ["Answer: B"] * 3
    assert (len(calls), len(limited)) == (3, 1)
    # a rerun resumes every question from its trace: nothing was computed, nothing to release
    assert runner.run_questions(agent, qs, tmp_path / "t", workers=2, progress=False) == ["Answer: B"] * 3
    assert (len(calls), len(limited)) == (3, 1)


class FakeLibc:
    def __init__(self):
        self.asked = []

    def malloc_trim(self, pad):
        self.asked.append(("malloc_trim", pad))
        return 1

    def mallopt(self, param, value):
        self.asked.append(("mallopt", param, value))
        return 1


def test_release_asks_the_c_library_when_it_has_malloc_trim(monkeypatch):
    libc = FakeLibc()
    monkeypatch.setattr(heap, "_libc", lambda: libc)
    assert heap.release_free_heap() is True and libc.asked == [("malloc_trim", 0)]
    monkeypatch.setattr(heap, "_libc", lambda: None)  # musl, macOS: nothing to ask
    assert heap.release_free_heap() is False


def test_arenas_are_limited_to_two_unless_the_user_set_malloc_arena_max(monkeypatch):
    libc = FakeLibc()
    monkeypatch.setattr(heap, "_libc", lambda: libc)
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert heap.limit_arenas.__wrapped__() is True and libc.asked == [("mallopt", -8, 2)]
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")  # the user's own setting wins
    assert heap.limit_arenas.__wrapped__() is False and len(libc.asked) == 1
    monkeypatch.setattr(heap, "_libc", lambda: None)
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    assert heap.limit_arenas.__wrapped__() is False


def test_the_real_c_library_is_found_here():
    """This machine runs glibc: both calls are real (a change that loses them would fail here)."""
    assert heap._libc() is not None and heap.release_free_heap() is True


def test_each_question_is_taken_in_as_it_finishes_not_after_the_whole_run(tmp_path, monkeypatch):
    """The runner handles a finished question (progress, heap trim, its result dropped) while later ones still run:
    question 2 starts only once question 0 has been handled. Waiting for the whole run first kept every finished
    question's trace in memory until the end (found at paper scale)."""
    import threading

    D.reset({"ref": {"sg": 2}, "a": {"sg": 1}, "b": {"sg": 2}})
    stems = {"Reference": "ref", "Video A": "a", "Video B": "b"}
    qs = [D.make_question(tmp_path, f"q{i}", "CNT", Q, {"A": "Video A", "B": "Video B"}, stems) for i in range(3)]
    handled = threading.Event()
    monkeypatch.setattr(runner, "release_free_heap", lambda: handled.set() or True)
    agent = SamaAgent(build_config(**D.DOUBLE_ARGS, cache_dir="none"))
    seen = {}
    real = agent.answer

    def answer(question, trace_path=None, resume_key=None):
        if question.id == "q2":
            seen["q0 handled before q2 started"] = handled.wait(timeout=5)
        return real(question, trace_path, resume_key=resume_key)

    monkeypatch.setattr(agent, "answer", answer)
    assert runner.run_questions(agent, qs, tmp_path / "t", workers=1, progress=False) == ["Answer: B"] * 3
    assert seen == {"q0 handled before q2 started": True}
