"""Freed heap memory goes back to the OS once per answered question (sama_model/heap.py)."""
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
    calls = []
    monkeypatch.setattr(runner, "release_free_heap", lambda: calls.append(1) or True)
    agent = SamaAgent(build_config(**D.DOUBLE_ARGS, cache_dir="none"))
    assert runner.run_questions(agent, qs, tmp_path / "t", workers=2, progress=False) == ["Answer: B"] * 3
    assert len(calls) == 3
    # a rerun resumes every question from its trace: nothing was computed, nothing to release
    assert runner.run_questions(agent, qs, tmp_path / "t", workers=2, progress=False) == ["Answer: B"] * 3
    assert len(calls) == 3


def test_release_asks_the_c_library_when_it_has_malloc_trim(monkeypatch):
    asked = []
    monkeypatch.setattr(heap, "_malloc_trim", lambda: (lambda pad: asked.append(pad) or 1))
    assert heap.release_free_heap() is True and asked == [0]
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)  # musl, macOS: nothing to ask
    assert heap.release_free_heap() is False
