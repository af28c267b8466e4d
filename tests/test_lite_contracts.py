"""Every lite backend resolves through the registry, satisfies its contract, returns JSON-safe
results, and gives identical results when called from several threads at once."""

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from sama_model.backends.lite.shared.frame_memo import FRAME_MEMO
from scenes import Mover, render_scene
from sama_model.tools import contracts
from sama_model.tools.backends import create_backend

VISUAL = {tool: contracts.CONTRACTS[tool] for tool in ("video_reader", "temporal_grounding", "scene_graph",
                                                      "object_tracker", "visual_similarity", "motion_analyzer")}


def _clip(seed: int):
    rng = np.random.default_rng(seed)
    movers = [
        Mover(
            str(rng.choice(["circle", "square", "triangle"])),
            str(rng.choice(["red", "blue", "green"])),
            tuple(float(v) for v in rng.uniform(30, 190, 2)),
            tuple(float(v) for v in rng.uniform(-4, 4, 2)),
            float(rng.uniform(10, 18)),
        )
        for _ in range(4)
    ]
    return render_scene(movers, n_frames=16, seed=seed)


def _call(tool: str, backend, clip, other):
    if tool == "video_reader":
        return backend.read(clip, "how many circles?")
    if tool == "temporal_grounding":
        return backend.ground(clip, "when does the red circle appear?")
    if tool == "scene_graph":
        return backend.graph(clip, "")
    if tool == "object_tracker":
        return backend.track(clip, "")
    if tool == "visual_similarity":
        return backend.compare(clip, other)
    return {"analyze": backend.analyze(clip), "continuity": backend.continuity(clip, other)}


@pytest.mark.parametrize("tool", sorted(VISUAL))
def test_registry_protocol_and_options(tool):
    backend = create_backend(tool, "lite", shared=False)
    assert isinstance(backend, VISUAL[tool])
    out = _call(tool, backend, _clip(0), _clip(1))
    assert json.loads(json.dumps(out)) == out  # JSON-serialisable as is


def test_documented_keys():
    clip, other = _clip(0), _clip(1)
    assert {"answer", "window", "frames_used", "description"} <= set(
        create_backend("video_reader", "lite").read(clip, "describe")
    )
    g = create_backend("temporal_grounding", "lite").ground(clip, "red circle")
    assert {"spans", "boundaries"} <= set(g) and all(0 <= s["score"] <= 1 for s in g["spans"])
    t = create_backend("object_tracker", "lite").track(clip)
    assert {"tracks", "counts", "max_per_frame"} <= set(t)
    assert all({"id", "label", "times", "boxes"} <= set(tr) for tr in t["tracks"])
    sg = create_backend("scene_graph", "lite").graph(clip)
    assert {"frames", "counts"} <= set(sg)
    assert all(
        {"id", "label", "box", "score", "color", "attributes"} <= set(o) for f in sg["frames"] for o in f["objects"]
    )
    c = create_backend("visual_similarity", "lite").compare(clip, other, aspect="style")
    assert 0 <= c["score"] <= 1 and {"palette_texture_cosine", "marks_distance"} <= set(c)
    m = create_backend("motion_analyzer", "lite").analyze(clip)
    assert {"trends", "pan", "tilt", "zoom", "per_segment"} <= set(m["camera"]) and all(
        "pattern" in o for o in m["objects"]
    )
    assert 0 <= create_backend("motion_analyzer", "lite").continuity(clip, other)["score"] <= 1


def test_options_are_accepted():
    tr = create_backend("object_tracker", "lite", shared=False, max_frames=8, seg_fg_delta=30.0)
    assert tr.segmenter.fg_delta == 30.0 and tr.track(_clip(0))["frames_used"] == 8
    assert create_backend("motion_analyzer", "lite", shared=False, pan_threshold=0.5).thresholds["pan"] == 0.5
    assert create_backend("visual_similarity", "lite", shared=False, n_frames=4).embed(_clip(0)).shape[0] == 4


def test_deterministic_and_thread_safe():
    clips = [_clip(s) for s in range(4)]
    tools = sorted(VISUAL)
    backends = {t: create_backend(t, "lite", shared=False) for t in tools}
    jobs = [(t, i) for t in tools for i in range(4)]
    FRAME_MEMO.clear()
    serial = {(t, i): json.dumps(_call(t, backends[t], clips[i], clips[(i + 1) % 4]), sort_keys=True) for t, i in jobs}
    FRAME_MEMO.clear()
    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = {
            job: pool.submit(_call, job[0], backends[job[0]], clips[job[1]], clips[(job[1] + 1) % 4]) for job in jobs
        }
        threaded = {job: json.dumps(f.result(), sort_keys=True) for job, f in futures.items()}
    assert threaded == serial


def test_a_backend_missing_a_contract_method_fails_when_built():
    from sama_model.tools.backends import BackendContractError, register_backend

    @register_backend("manipulation_detector", "half-done")
    class HalfDone:  # no detect()
        def analyze(self, clip):
            return {}

    with pytest.raises(BackendContractError, match="backend 'half-done' for tool 'manipulation_detector' lacks detect"):
        create_backend("manipulation_detector", "half-done", shared=False)
