"""Camera motion (known pans/tilts/zooms of a crop window), object motion patterns, continuity."""

import importlib.util
from pathlib import Path

import cv2
import numpy as np
import pytest

from scenes import background, camera_clip, draw_shape, make_clip, textured_image
from sama_model.backends.lite.motion.flow import camera_terms, global_motion
from sama_model.backends.lite.motion_analyzer import LiteMotionAnalyzer

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
    from sama_model.backends.lite.manipulation_detector import manipulation_evidence

    clean = _panning_clip()
    fake = clean.copy()
    fake[:, 40:80, 60:110] = clean[4, 40:80, 60:110]  # a region frozen in time while the camera pans
    e_clean, e_fake = manipulation_evidence(clean), manipulation_evidence(fake)
    assert e_fake["score"] > e_clean["score"]
    assert e_fake["raw"]["camera_misfit"] > e_clean["raw"]["camera_misfit"]


def test_copy_move_detected_with_its_offset():
    from sama_model.backends.lite.manipulation_detector import manipulation_evidence

    clean = _panning_clip(seed=1)
    fake = clean.copy()
    fake[:, 30:70, 110:160] = clean[:, 30:70, 20:70]  # the same moving content twice per frame
    e_clean, e_fake = manipulation_evidence(clean), manipulation_evidence(fake)
    assert e_fake["cues"]["copy_move"] > e_clean["cues"]["copy_move"]
    assert e_fake["copy_offset"] is not None and abs(abs(e_fake["copy_offset"][1]) - 90) <= 2


def test_manipulation_score_is_calibrated_on_pinned_and_copy_move():
    """No pinned region and no duplicates -> the bias alone, sigmoid(-2.725) = 0.0615; a frozen
    region crosses 0.5; a clone's copy-move cue (20 votes per frame) decides on its own."""
    from sama_model.backends.lite.manipulation_detector import manipulation_evidence

    clean = _panning_clip()
    frozen = clean.copy()
    frozen[:, 40:80, 60:110] = clean[4, 40:80, 60:110]
    cloned = clean.copy()
    cloned[:, 30:70, 110:160] = clean[:, 30:70, 20:70]
    e_clean, e_frozen, e_cloned = (manipulation_evidence(x) for x in (clean, frozen, cloned))
    assert e_clean["raw"]["pinned"] == 0.0 and e_clean["raw"]["copy_move_votes"] == 0.0
    assert e_clean["score"] == pytest.approx(0.0615, abs=1e-4)
    assert e_frozen["score"] > 0.5 > e_clean["score"]
    assert e_cloned["score"] == e_cloned["cues"]["copy_move"] > 0.99


def test_forensics_is_its_own_backend_not_part_of_motion():
    from sama_model.backends.lite.manipulation_detector import LiteManipulationDetector

    clip = make_clip(_panning_clip(T=12), fps=8.0)
    out = LiteManipulationDetector().detect(clip)
    assert 0.0 <= out["score"] <= 1.0
    assert set(out["cues"]) == {"camera_misfit", "pinned", "copy_move"}
    assert "manipulation" not in LiteMotionAnalyzer().analyze(clip)


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
    from sama_model.skills.multi_video_comparison.am import main_actor

    objs = [{"id": 1, "patterns": ["static"], "size_px": 60.0, "path_px": 0.0},  # a big backdrop shape
            {"id": 2, "patterns": ["static", "pulsing"], "size_px": 30.0, "path_px": 2.0},  # the actor
            {"id": 3, "patterns": ["linear"], "size_px": 8.0, "path_px": 90.0}]  # small drifting clutter
    assert main_actor(objs)["id"] == 2
    assert main_actor([objs[0]])["id"] == 1  # nothing active: the largest
    assert main_actor([{"id": 4, "patterns": ["linear"], "path_px": 5.0},
                       {"id": 5, "patterns": ["bouncing"], "path_px": 50.0}])["id"] == 5  # no sizes: moves most


# -- waveform-based oscillation kinds (8 fps, 24 frames, like MVX-Synth's AM clips) --------------

def _fps8(fn, n=24, shape="square", size=16.0):
    """A red shape on a noise background whose centre follows ``fn(t)`` (t in seconds at 8 fps)."""
    return _traj(lambda i: fn(i / 8.0), shape=shape, n=n, size=size)


def _tri(u):
    """Triangle wave in [-1, 1] with period 1."""
    return 2 * np.abs((u % 1.0) - 0.5) * 2 - 1


@pytest.mark.parametrize(
    "name,fn,pattern",
    [
        # a ball bouncing in place: y = floor - A |sin| (sharp turn at the floor, rounded apex)
        ("bounce in place", lambda t: (112, 150 - 90 * abs(np.sin(np.pi * 1.0 * t + 0.4))), "bouncing"),
        # zig-zag: sharp turns on both sides while advancing ~1.3 object sizes over the clip
        ("slow zigzag", lambda t: (90 + 12 * t, 112 + 18 * _tri(1.4 * t + 0.2)), "zig-zag"),
        # a faster zig-zag across most of the frame
        ("fast zigzag", lambda t: (40 + 45 * t, 112 + 16 * _tri(1.5 * t)), "zig-zag"),
        # a slow slide (about one object size per second) with sub-pixel steps: no reversals
        ("slow slide", lambda t: (80 + 10 * t, 100 + 3 * t), "linear"),
        # shaking: +-7 px at 2.8 Hz, going nowhere
        ("shake", lambda t: (112 + 7 * np.sin(2 * np.pi * 2.8 * t + 1.0), 112), "shaking"),
    ],
)
def test_oscillation_kinds_at_8_fps(name, fn, pattern):
    objs = LiteMotionAnalyzer().analyze(_fps8(fn))["objects"]
    assert len(objs) == 1 and objs[0]["pattern"] == pattern, (name, objs[0]["patterns"])


def test_waveform_fit_recovers_shape_and_rate():
    """Exact samples: each template explains its own waveform fully, at the right rate, and a
    triangle and |sin| are told apart (the fit of the other template is clearly worse)."""
    from sama_model.backends.lite.motion.trajectory import _waveform_fit

    t = np.arange(24) / 8.0
    bounce = -np.abs(np.sin(np.pi * (1.0 * t + 10 / 48)))  # 1 bounce per second, a phase on the grid
    zig = _tri(1.4 * t + 5 / 48)
    fit_b, rate_b = _waveform_fit(t, bounce, "abs_sin")
    fit_z, rate_z = _waveform_fit(t, zig, "triangle")
    assert fit_b > 0.999 and rate_b == pytest.approx(1.0, abs=0.02)
    assert fit_z > 0.999 and rate_z == pytest.approx(1.4, abs=0.02)
    assert 1 - _waveform_fit(t, bounce, "triangle")[0] > 3 * (1 - fit_b)
    assert 1 - _waveform_fit(t, zig, "abs_sin")[0] > 3 * (1 - fit_z)


def test_one_frame_size_glitch_is_not_pulsing():
    """A still object whose area halves in a single frame (an occluder, a merge) is not pulsing."""
    clip = _sized(lambda i: (112, 112), lambda i: 10 if i in (8, 16) else 20)
    (obj,) = LiteMotionAnalyzer().analyze(clip)["objects"]
    assert "pulsing" not in obj["patterns"]


def test_small_wobble_of_a_still_object_is_static():
    """A centroid that wanders by a fraction of the object's size, irregularly, is no action."""
    rng = np.random.default_rng(3)
    pos = np.cumsum(rng.normal(0, 1.5, (24, 2)), axis=0)
    pos -= pos.mean(0)
    pos *= 9.0 / max(float(np.ptp(pos, axis=0).max()), 1e-6)  # extent ~9 px, object ~35 px across
    clip = _sized(lambda i: (112 + pos[i, 0], 112 + pos[i, 1]), lambda i: 20)
    (obj,) = LiteMotionAnalyzer().analyze(clip)["objects"]
    assert obj["pattern"] == "static"


def test_spin_rate_sees_through_symmetry_aliasing():
    """A hexagon turning ~30 degrees a frame (240 deg/s at 8 fps) measures, modulo its 60-degree
    symmetry, as steps of alternating sign (+28, -29, ...): one steady rate explains them all.
    A still shape (steps of +-1 degree) has rate ~0."""
    from sama_model.backends.lite.motion.rotation import spin_rate

    true_steps = 30.0 + np.array([-2, 1, 2, -1, 3, -2, 1, 2, -3, 0, 2, -1])
    observed = (true_steps + 30.0) % 60.0 - 30.0  # what a 6-fold outline shows
    assert (observed > 0).any() and (observed < 0).any()
    rate, support = spin_rate([(float(r), 6, 0.125) for r in observed])
    assert support == 1.0 and abs(rate) == pytest.approx(240.0, abs=25.0)
    rate0, support0 = spin_rate([(float(r), 6, 0.125) for r in (1, -1, 0, 1, 0, -1)])
    assert support0 == 1.0 and abs(rate0) < 10.0


def test_rotation_harmonics_measure_each_consecutive_pair_once_per_outline():
    """A square turned 10 degrees a step (clockwise on screen), then a circle, then a 4-point outline:
    the square's pairs measure +10 on harmonic 4; a pair with the circle (no angular structure) or the
    short outline (too few points) measures nothing; every value is rotation_harmonic's, bit for bit."""
    from sama_model.backends.lite.motion.rotation import rotation_harmonic, rotation_harmonics
    from sama_model.backends.lite.perception.segment import Segment

    def outline(points: np.ndarray) -> Segment:
        return Segment(box=(0, 0, 1, 1), centroid=(50.0, 50.0), area=1.0, color="", shape="", rgb=(0, 0, 0),
                       circularity=0.0, solidity=1.0, vertices=0, aspect=1.0, contour=points.astype(np.float32))

    t = np.linspace(0, 2 * np.pi, 200, endpoint=False)
    r = 20.0 / np.maximum(np.abs(np.cos(t)), np.abs(np.sin(t)))  # a square's radius by angle
    squares = [outline(np.stack([50 + r * np.cos(t + np.radians(10 * i)), 50 + r * np.sin(t + np.radians(10 * i))], 1))
               for i in range(3)]
    circle = outline(np.stack([50 + 20 * np.cos(t), 50 + 20 * np.sin(t)], 1))
    short = outline(np.array([[40, 40], [60, 40], [60, 60], [40, 60]]))
    segs = squares + [circle, short]
    got = rotation_harmonics(segs)
    assert got == [rotation_harmonic(a, b) for a, b in zip(segs[:-1], segs[1:])]
    assert [g is None for g in got] == [False, False, True, True]
    assert [g[1] for g in got[:2]] == [4, 4]
    assert [g[0] for g in got[:2]] == pytest.approx([10.0, 10.0], abs=0.5)
