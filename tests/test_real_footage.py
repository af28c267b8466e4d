"""The offline profile on real footage: the sample videos that the gradio wheel carries.

gradio is installed with --no-deps only for its media files; it is never imported.
"""
import importlib.util
from pathlib import Path

import pytest

from sama_model.agent import SamaAgent
from sama_model.profiles import build_config
from sama_model.question import AgentQuestion, VideoRef


def _gradio_videos() -> Path:
    spec = importlib.util.find_spec("gradio")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("gradio's wheel (real sample videos) is not installed")
    folder = Path(list(spec.submodule_search_locations)[0]) / "media_assets" / "videos"
    if not (folder / "world.mp4").is_file():
        pytest.skip("gradio carries no sample videos in this version")
    return folder


@pytest.mark.parametrize("task,question,options,files", [
    ("VS", "Which candidate is a near-duplicate of the reference video?",
     {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"},
     ["b.mp4", "muted_b.mp4", "world.mp4", "a.mp4", "b.avi"]),
    ("CNT", "Which candidate video shows the same number of people as the reference?",
     {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"},
     ["world.mp4", "a.mp4", "b.mp4", "b.avi", "muted_b.mp4"]),
    ("SPR", "Which candidate video shares at least one camera-motion trend with the reference?",
     {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"},
     ["world.mp4", "a.mp4", "b.mp4", "b.avi", "muted_b.mp4"]),
])
def test_offline_profile_runs_every_tool_on_real_videos(task, question, options, files, tmp_path):
    folder = _gradio_videos()
    labels = ["Reference", "Video A", "Video B", "Video C", "Video D"]
    q = AgentQuestion(id=f"real-{task.lower()}", question=question, options=options, task=task, root=str(folder),
                      videos=tuple(VideoRef(lb, str(folder / f)) for lb, f in zip(labels, files)))
    agent = SamaAgent(build_config(profile="offline", cache_dir=str(tmp_path / "cache")))
    result = agent.answer(q, tmp_path / "trace.json")
    assert result.status == "finished", result.failure
    assert result.letter in options
    calls = [s for s in result.trace.steps if type(s).__name__ == "ToolStep"]
    assert calls, "the policy called no tool"
    errors = [s for s in calls if getattr(s, "error", None)]
    assert not errors, [(s.tool, s.error) for s in errors]
