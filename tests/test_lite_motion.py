"""Camera motion (known pans/tilts/zooms of a crop window), object motion patterns, continuity."""

import importlib.util
from pathlib import Path

import cv2
import numpy as np
import pytest

from sama_model.backends.lite.fixtures import background, camera_clip, draw_shape, make_clip, textured_image
from sama_model.backends.lite.flow import camera_terms, global_motion
from sama_model.backends.lite.motion import LiteMotionAnalyzer

IMAGE = textured_image(600, 800, seed=1)


def _photo() -> np.ndarray:
    """A real photograph shipped inside an installed package (matplotlib, a dependency, or scikit-learn)."""
    for pkg, rel in (("matplotlib", "mpl-data/sample_data/grace_hopper.jpg"), ("sklearn", "datasets/images/china.jpg")):
        spec = importlib.util.find_spec(pkg)
        if spec and spec.origin:
            path = Path(spec.origin).parent / rel
            if path.is_file():
                return cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB)
    pytest.skip("no sample photograph found in scikit-learn or matplotlib")


def test_global_motion_exact_translation_and_scale():
    # the 300-px window moves 4 px right per frame and is rendered at 224 px: content moves left by 4/300
    clip = camera_clip(IMAGE, n_frames=2, shift=(4, 0), crop=300)
    m = global_motion(clip.frames[0], clip.frames[1])
    assert m.dx == pytest.approx(-4 / 300, abs=0.001) and abs(m.dy) < 0.001 and m.scale == pytest.approx(1, abs=0.003)
    clip = camera_clip(IMAGE, n_frames=2, zoom=1.05, crop=300)
    m = global_motion(clip.frames[0], clip.frames[1])
    assert m.scale == pytest.approx(1.05, abs=0.005) and abs(m.dx) < 0.002 and abs(m.dy) < 0.002
    terms = camera_terms(global_motion(*camera_clip(IMAGE, n_frames=2, shift=(0, -3), crop=300).frames), dt=0.125)
    assert terms["tilt"] == pytest.approx(3 / 300 / 0.125, rel=0.05)  # window up -> content down -> tilt up


@pytest.mark.parametrize(
    "shift,zoom,trends",
    [
        ((4, 0), 1.0, ["pan_right"]),
        ((-4, 0), 1.0, ["pan_left"]),
        ((0, 3), 1.0, ["tilt_down"]),
        ((0, -3), 1.0, ["tilt_up"]),
        ((0, 0), 1.02, ["zoom_in"]),
        ((0, 0), 1 / 1.02, ["zoom_out"]),
        ((0, 0), 1.0, ["static"]),
        ((3, -3), 1.0, ["pan_right", "tilt_up"]),
    ],
)
def test_camera_trends(shift, zoom, trends):
    clip = camera_clip(IMAGE, n_frames=16, shift=shift, zoom=zoom, crop=300)
    cam = LiteMotionAnalyzer().analyze(clip)["camera"]
    assert sorted(cam["trends"]) == sorted(trends)
    if shift[0]:
        # 8 fps, shift/300 frame widths per frame; pan>0 is a pan to the right
        assert cam["pan"] == pytest.approx(shift[0] / 300 * 8, rel=0.05)


def test_camera_pan_over_a_real_photograph():
    photo = _photo()
    h, w = photo.shape[:2]
    side = min(h, w) // 2
    left = camera_clip(photo, n_frames=12, start=(w * 0.6, h / 2), shift=(-5, 0), crop=side)
    right = camera_clip(photo, n_frames=12, start=(w * 0.4, h / 2), shift=(5, 0), crop=side)
    an = LiteMotionAnalyzer()
    assert an.analyze(left)["camera"]["trends"] == ["pan_left"]
    assert an.analyze(right)["camera"]["trends"] == ["pan_right"]
    assert an.analyze(right)["camera"]["pan"] == pytest.approx(5 / side * 8, rel=0.1)


def test_camera_ignores_moving_objects_on_static_background():
    base = background(224, 224, "noise", seed=0)
    frames = []
    for i in range(16):
        img = base.copy()
        draw_shape(img, "circle", "red", (30 + 6 * i, 60), 14)
        draw_shape(img, "square", "blue", (190 - 6 * i, 160), 16)
        frames.append(img)
    assert LiteMotionAnalyzer().analyze(make_clip(frames))["camera"]["trends"] == ["static"]


def _traj(fn, shape="square", n=32, spin=0.0, growth=0.0, size=12.0):
    base = background(224, 224, "noise", seed=0)
    frames = []
    for i in range(n):
        img = base.copy()
        draw_shape(img, shape, "red", fn(i), size + growth * i, spin * i)
        frames.append(img)
    return make_clip(frames)


@pytest.mark.parametrize(
    "name,clip,pattern",
    [
        ("linear", lambda: _traj(lambda i: (20 + 5 * i, 30 + 2 * i)), "linear"),
        ("static", lambda: _traj(lambda i: (100, 100)), "static"),
        ("spin", lambda: _traj(lambda i: (100, 100), shape="star", spin=12), "spinning"),
        ("grow", lambda: _traj(lambda i: (100, 100), growth=0.8), "growing"),
        ("shrink", lambda: _traj(lambda i: (100, 100), shape="circle", growth=-0.25), "shrinking"),
        (
            "orbit",
            lambda: _traj(lambda i: (112 + 60 * np.cos(i * 0.3), 112 + 60 * np.sin(i * 0.3)), shape="circle"),
            "orbiting",
        ),
        (
            "bounce",
            lambda: _traj(lambda i: (20 + 5 * i, 190 - abs(100 * np.sin(i * 0.35))), shape="circle"),
            "bouncing",
        ),
        (
            "zigzag",
            lambda: _traj(lambda i: (20 + 5 * i, 112 + (abs((i * 8) % 64 - 32) - 16) * 2), shape="circle"),
            "zig-zag",
        ),
        (
            "walls",
            lambda: _traj(lambda i: (112 + (abs((i * 12) % 392 - 196) - 98), 60 + 2 * i), shape="circle"),
            "bouncing",
        ),
    ],
)
def test_object_patterns(name, clip, pattern):
    objs = LiteMotionAnalyzer().analyze(clip())["objects"]
    assert len(objs) == 1 and objs[0]["pattern"] == pattern


def test_spin_rate_and_direction():
    (obj,) = LiteMotionAnalyzer().analyze(_traj(lambda i: (100, 100), shape="star", spin=12, size=20))["objects"]
    assert obj["spin_deg_per_s"] == pytest.approx(12 * 8, rel=0.1)  # clockwise on screen is positive
    (obj,) = LiteMotionAnalyzer().analyze(_traj(lambda i: (100, 100), shape="square", spin=-10, size=20))["objects"]
    assert obj["spin_deg_per_s"] == pytest.approx(-10 * 8, rel=0.1)


def test_object_pattern_is_relative_to_the_camera():
    """A shape fixed in the scene under a panning camera is static in the scene, not 'linear'."""
    scene = background(400, 900, "noise", seed=4)
    draw_shape(scene, "square", "red", (450, 200), 40)
    clip = camera_clip(scene, n_frames=16, start=(420, 200), shift=(4, 0), crop=300)
    res = LiteMotionAnalyzer().analyze(clip)
    assert res["camera"]["trends"] == ["pan_right"]
    assert [o["pattern"] for o in res["objects"]] == ["static"]


def test_continuity_prefers_the_true_next_clip():
    base = camera_clip(IMAGE, n_frames=36, shift=(4, 1), crop=300)
    frames = base.frames.copy()
    for i, f in enumerate(frames):
        draw_shape(f, "circle", "yellow", (20 + 5 * i, 100), 12)
    parts = [make_clip(frames[k : k + 12]) for k in (0, 12, 24)]
    an = LiteMotionAnalyzer()
    s_ab, s_ac = an.continuity(parts[0], parts[1])["score"], an.continuity(parts[0], parts[2])["score"]
    s_bc, s_ba = an.continuity(parts[1], parts[2])["score"], an.continuity(parts[1], parts[0])["score"]
    assert 0 <= s_ac < s_ab <= 1 and s_ab - s_ac > 0.2
    assert s_ba < s_bc and s_bc - s_ba > 0.2


# -- forensics: manipulation evidence ------------------------------------------------------------
def _panning_clip(T: int = 24, seed: int = 0) -> np.ndarray:
    """A textured canvas seen by a camera panning right by 2 px per frame."""
    import cv2

    rng = np.random.default_rng(seed)
    canvas = cv2.GaussianBlur(rng.uniform(0, 255, (200, 320, 3)).astype(np.float32), (0, 0), 2.5)
    canvas = np.clip((canvas - canvas.mean()) * 4 + 128, 0, 255).astype(np.uint8)
    return np.stack([canvas[20:164, 2 * t:2 * t + 192] for t in range(T)])


def test_frozen_patch_scores_higher_than_clean():
    from sama_model.backends.lite.forensics import manipulation_evidence

    clean = _panning_clip()
    fake = clean.copy()
    fake[:, 40:80, 60:110] = clean[4, 40:80, 60:110]  # a region frozen in time while the camera pans
    e_clean, e_fake = manipulation_evidence(clean), manipulation_evidence(fake)
    assert e_fake["score"] > e_clean["score"]
    assert e_fake["raw"]["camera_misfit"] > e_clean["raw"]["camera_misfit"]


def test_copy_move_detected_with_its_offset():
    from sama_model.backends.lite.forensics import manipulation_evidence

    clean = _panning_clip(seed=1)
    fake = clean.copy()
    fake[:, 30:70, 110:160] = clean[:, 30:70, 20:70]  # the same moving content twice per frame
    e_clean, e_fake = manipulation_evidence(clean), manipulation_evidence(fake)
    assert e_fake["cues"]["copy_move"] > e_clean["cues"]["copy_move"]
    assert e_fake["copy_offset"] is not None and abs(abs(e_fake["copy_offset"][1]) - 90) <= 2


def test_analyze_reports_manipulation_block():
    clip = make_clip(_panning_clip(T=12), fps=8.0)
    out = LiteMotionAnalyzer().analyze(clip)
    assert 0.0 <= out["manipulation"]["score"] <= 1.0
    assert set(out["manipulation"]["cues"]) == {"camera_misfit", "pinned", "copy_move"}


def _sized(fn_xy, fn_size, shape="circle", n=24):
    """A shape whose centre and size follow ``fn_xy(i)`` and ``fn_size(i)`` over a noise background."""
    base = background(224, 224, "noise", seed=0)
    frames = []
    for i in range(n):
        img = base.copy()
        draw_shape(img, shape, "red", fn_xy(i), fn_size(i))
        frames.append(img)
    return make_clip(frames)


def test_pulsing_is_a_size_swing_in_place():
    """Radius 20 x (1 +- 0.4) over three cycles: area varies ~5x, up and down repeatedly."""
    clip = _sized(lambda i: (112, 112), lambda i: 20 * (1 + 0.4 * np.sin(2 * np.pi * i / 8)))
    (obj,) = LiteMotionAnalyzer().analyze(clip)["objects"]
    assert obj["patterns"] == ["static", "pulsing"] and obj["pattern"] == "pulsing"


def test_shaking_goes_back_and_forth_without_getting_anywhere():
    """x swings +-10 px with a 2.7-frame period (3 Hz at 8 fps): many reversals, no net travel."""
    clip = _sized(lambda i: (112 + 10 * np.sin(2 * np.pi * i / 2.7), 112), lambda i: 16)
    (obj,) = LiteMotionAnalyzer().analyze(clip)["objects"]
    assert obj["pattern"] == "shaking"


def test_main_actor_is_the_largest_object_doing_something():
    from sama_model.skills.multi_video_comparison.policy import main_actor

    objs = [{"id": 1, "patterns": ["static"], "size_px": 60.0, "path_px": 0.0},  # a big backdrop shape
            {"id": 2, "patterns": ["static", "pulsing"], "size_px": 30.0, "path_px": 2.0},  # the actor
            {"id": 3, "patterns": ["linear"], "size_px": 8.0, "path_px": 90.0}]  # small drifting clutter
    assert main_actor(objs)["id"] == 2
    assert main_actor([objs[0]])["id"] == 1  # nothing active: the largest
    assert main_actor([{"id": 4, "patterns": ["linear"], "path_px": 5.0},
                       {"id": 5, "patterns": ["bouncing"], "path_px": 50.0}])["id"] == 5  # no sizes: moves most
