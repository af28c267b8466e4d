"""Every setting that changes the frames the tools read is in the tool-cache key and the resume key: a changed
setting recomputes, the same setting again hits."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import test_sama_doubles as D

from mvx_tasks import video_decoder
from sama_model.cache import ToolCache, cache_key
from sama_model.question_videos import QuestionVideos
from sama_model.tools import TOOL_CLASSES
from sama_model.tools.toolkit import BackendSpec, build_tools

VIDEOS = {"Video A": "a", "Video B": "b"}


@pytest.fixture()
def restore_decoder():
    policy, decoder = video_decoder.current_policy(), video_decoder.DECODER
    yield
    video_decoder.configure(fps=policy.fps, min_frames=policy.min_frames, max_frames=policy.max_frames,
                            max_side=policy.max_side, decoder=decoder)


def _motion(question, cache):
    specs = {name: BackendSpec("double") for name in TOOL_CLASSES}
    return build_tools(QuestionVideos(question), specs, cache)["motion_analyzer"]


@pytest.mark.parametrize("setting", [{"max_side": 224}, {"fps": 2.0}, {"min_frames": 8}, {"max_frames": 300},
                                     {"decoder": "av"}])
def test_a_changed_decode_setting_recomputes_and_the_same_one_hits(tmp_path, restore_decoder, setting):
    D.reset({"a": {"next": {"b": 0.9}}})
    question = D.make_question(tmp_path, "q", "SEQ", "In which order?", {"A": "Video A, Video B"}, VIDEOS)
    cache = ToolCache(tmp_path / "cache")
    first = _motion(question, cache)(video="Video A", next_video="Video B")
    assert not first.cached and D.CALLS["continuity"] == 1
    assert _motion(question, cache)(video="Video A", next_video="Video B").cached  # same settings: a hit
    before = video_decoder.decode_settings()
    video_decoder.configure(**setting)
    assert video_decoder.decode_settings() != before
    changed = _motion(question, cache)(video="Video A", next_video="Video B")
    assert not changed.cached and D.CALLS["continuity"] == 2  # computed again under the new setting
    assert _motion(question, cache)(video="Video A", next_video="Video B").cached  # and that one is kept too
    video_decoder.configure(**{k: before[k] for k in setting})  # back to the first settings: its entry hits
    assert _motion(question, cache)(video="Video A", next_video="Video B").cached and D.CALLS["continuity"] == 2


def test_cache_key_and_resume_revision_follow_the_decode_settings(restore_decoder):
    from sama_model.resume import code_revision

    key, revision = cache_key("t", "b", {}, {"video": "h"}, {}), code_revision()
    assert cache_key("t", "b", {}, {"video": "h"}, {}, decode=video_decoder.decode_settings()) == key
    video_decoder.configure(max_side=160)
    assert cache_key("t", "b", {}, {"video": "h"}, {}) != key and code_revision() != revision
    assert set(video_decoder.decode_settings()) == {"fps", "min_frames", "max_frames", "max_side", "decoder",
                                                    "window_min_frames", "window_max_frames"}


@pytest.mark.parametrize("env, field, value", [("MVX_MAX_DECODE_SIDE", "max_side", 320),
                                               ("MVX_SAMPLE_FPS", "fps", 3.0), ("MVX_MIN_FRAMES", "min_frames", 16),
                                               ("MVX_DECODER", "decoder", "av"),
                                               ("MVX_WINDOW_MIN_FRAMES", "window_min_frames", 24),
                                               ("MVX_MAX_DECODE_FRAMES", "max_frames", 64)])
def test_the_environment_settings_reach_the_key(env, field, value):
    """The settings a user sets in the environment (read once at import) are the ones the key carries."""
    code = "import json; from mvx_tasks.video_decoder import decode_settings; print(json.dumps(decode_settings()))"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MVX_")}
    out = subprocess.run([sys.executable, "-c", code], env={**clean, env: str(value)}, capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout)[field] == value
