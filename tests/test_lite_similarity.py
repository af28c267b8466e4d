"""Visual similarity (the tool's scoring rule): near-duplicates beat different clips; style and content
are separable."""

import cv2
import numpy as np
import pytest

from sama_model.backends.lite.perception.features import CONTENT_DIM, MARK_NAMES, STYLE_DIM, dhash, hamming_similarity, phash
from scenes import (
    background,
    camera_clip,
    draw_shape,
    jpeg_roundtrip,
    make_clip,
    textured_image,
)
from sama_model.backends.lite.identity import compare as id_compare
from sama_model.backends.lite.identity import descriptor as id_descriptor
from sama_model.backends.lite.identity import rows as id_rows
from sama_model.backends.lite.identity import texture as id_texture
from sama_model.backends.lite.identity.rows import ReadPath
from sama_model.backends.lite.identity.rows import IDENTITY_DIM, ROW_DIM
from sama_model.backends.lite.visual_similarity import LiteVisualSimilarity

SIM = LiteVisualSimilarity()


def _scene_clip(seed: int, n: int = 8) -> "object":
    rng = np.random.default_rng(seed)
    img = textured_image(500, 700, seed=seed)
    for _ in range(6):
        draw_shape(
            img,
            str(rng.choice(["circle", "square", "triangle", "star"])),
            tuple(int(c) for c in rng.integers(0, 255, 3)),
            tuple(float(v) for v in rng.uniform(80, 420, 2)),
            float(rng.uniform(20, 50)),
        )
    return camera_clip(img, n_frames=n, shift=(3, 1), crop=300)


REF = _scene_clip(1)


@pytest.mark.parametrize("variant", ["jpeg", "colour", "crop", "brightness"])
def test_near_duplicates_beat_different_clips(variant):
    f = REF.frames
    if variant == "jpeg":
        dup = jpeg_roundtrip(f, quality=20)
    elif variant == "colour":
        dup = np.clip(f.astype(int) * [1.0, 0.85, 0.7] + [25, 0, -10], 0, 255).astype(np.uint8)
    elif variant == "crop":
        dup = np.stack([cv2.resize(x[18:-18, 18:-18], (224, 224)) for x in f])
    else:
        dup = np.clip(f.astype(int) * 0.7 + 40, 0, 255).astype(np.uint8)
    dup_score = SIM.compare(REF, make_clip(dup))["score"]
    others = [SIM.compare(REF, _scene_clip(s))["score"] for s in (2, 3, 4)]
    assert max(others) < 0.5 and all(0.0 <= x <= 1.0 for x in others)
    if variant == "crop":  # the score (cosine of mean layouts) is not crop-aware: a cropped copy only ranks first
        assert 0.5 < dup_score < 0.85
    else:
        assert dup_score > 0.85


def test_embeddings_shape_and_norm():
    e = SIM.embed(REF)
    s = SIM.embed(REF, aspect="style")
    # style rows: the unit-norm palette/texture embedding, then the rendering marks
    assert e.shape == (8, CONTENT_DIM) and s.shape == (8, STYLE_DIM + len(MARK_NAMES))
    assert np.allclose(np.linalg.norm(e, axis=1), 1, atol=1e-5)
    assert np.allclose(np.linalg.norm(s[:, :STYLE_DIM], axis=1), 1, atol=1e-5)
    assert SIM.compare(REF, REF)["score"] == pytest.approx(1.0, abs=1e-4)
    assert SIM.embed(REF, window=(0.0, 0.3)).shape[0] == 3  # frames at 0, 0.125, 0.25 s


def test_window_selects_frames():
    # the second half of a clip matches a clip made of its second half better than of its first half
    long = _scene_clip(7, n=24)
    tail = make_clip(long.frames[12:])
    head = make_clip(long.frames[:12])
    assert SIM.compare(long, tail, window_a=(1.5, 3.0))["score"] > SIM.compare(long, head, window_a=(1.5, 3.0))["score"]


def _flat_style(img: np.ndarray) -> np.ndarray:
    """Cartoon: posterised vivid colours with dark outlines."""
    q = (img // 64) * 64 + 32
    hsv = cv2.cvtColor(q.astype(np.uint8), cv2.COLOR_RGB2HSV)
    hsv[..., 1] = np.clip(hsv[..., 1].astype(int) * 2, 0, 255)
    out = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)
    edges = cv2.Canny(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), 50, 120)
    out[cv2.dilate(edges, np.ones((2, 2), np.uint8)) > 0] = 0
    return out


def _soft_style(img: np.ndarray, seed: int) -> np.ndarray:
    """Painterly/photographic: desaturated, blurred, with fine grain."""
    rng = np.random.default_rng(seed)
    g = cv2.GaussianBlur(img, (0, 0), 2.0).astype(np.float32)
    grey = g.mean(2, keepdims=True)
    g = grey + 0.35 * (g - grey)
    return np.clip(g + rng.normal(0, 9, g.shape), 0, 255).astype(np.uint8)


def _layout(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = background(224, 224, "gradient", seed=seed, base=tuple(int(c) for c in rng.integers(60, 200, 3)))
    for _ in range(5):
        draw_shape(
            img,
            str(rng.choice(["circle", "square", "triangle", "star"])),
            tuple(int(c) for c in rng.integers(0, 255, 3)),
            tuple(float(v) for v in rng.uniform(30, 194, 2)),
            float(rng.uniform(18, 40)),
        )
    return img


def test_style_and_content_are_separable():
    l1, l2 = _layout(11), _layout(12)
    a = make_clip([_flat_style(l1)] * 4)  # layout 1, cartoon
    b = make_clip([_flat_style(l2)] * 4)  # layout 2, cartoon
    c = make_clip([_soft_style(l1, 0)] * 4)  # layout 1, soft
    content_same, content_diff = SIM.compare(a, c)["score"], SIM.compare(a, b)["score"]
    style_same, style_diff = SIM.compare(a, b, aspect="style")["score"], SIM.compare(a, c, aspect="style")["score"]
    assert content_same > content_diff + 0.2
    assert style_same > style_diff + 0.1


def test_perceptual_hashes_survive_reencoding():
    f = REF.frames[0]
    j = jpeg_roundtrip(f[None], quality=15)[0]
    other = _scene_clip(5).frames[0]
    assert hamming_similarity(phash(f), phash(j)) >= 0.9 and hamming_similarity(dhash(f), dhash(j)) >= 0.85
    assert hamming_similarity(phash(f), phash(other)) < 0.75


def test_bad_aspect_is_an_error():
    with pytest.raises(ValueError, match="aspect"):
        SIM.embed(REF, aspect="colour")


# -- identity aspect: the main moving subject's look ---------------------------------------------
def _figure_clip(colours, bg_seed: int, scale: float = 1.0, T: int = 16, squash: float = 1.0,
                 zoom: int = 1):
    """A two-part figure (body square, head circle) walking right over a smooth random background;
    with a small static distractor so the subject has to be chosen. ``zoom``: frame, path and
    figure that many times larger (a close-up on a bigger frame)."""
    rng = np.random.default_rng(bg_seed)
    bg = cv2.GaussianBlur(rng.uniform(60, 160, (144, 192, 3)).astype(np.float32), (0, 0), 6).astype(np.uint8)
    bg = cv2.resize(bg, (192 * zoom, 144 * zoom), interpolation=cv2.INTER_LINEAR)
    scale *= zoom
    frames = []
    for t in range(T):
        f = bg.copy()
        x, y = zoom * int(40 + 5 * t), zoom * 80
        r, rw = 16 * scale, 16 * scale * squash  # another camera: the whole figure scaled and squashed
        leg_w, leg_h = max(2, round(3 * scale * squash)), round(10 * scale)
        cv2.rectangle(f, (round(x - rw), round(y - r)), (round(x + rw), round(y + r)), colours[0], -1)
        cv2.ellipse(f, (x, round(y - 1.6 * r)), (round(0.6 * rw), round(0.6 * r)), 0, 0, 360, colours[1], -1)
        for lx in (round(x - rw / 2), round(x + rw / 2) - leg_w):
            cv2.rectangle(f, (lx, round(y + r)), (lx + leg_w, round(y + r) + leg_h), (15, 15, 15), -1)
        frames.append(f)
    return make_clip(np.stack(frames), fps=8.0)


RED, BLUE, GREEN, YELLOW = (210, 40, 40), (40, 80, 220), (40, 180, 60), (230, 210, 40)


def test_identity_locates_the_multicoloured_moving_subject():
    from sama_model.backends.lite.identity.descriptor import subject_boxes, subject_mask

    clip = _figure_clip((RED, BLUE), bg_seed=1)
    boxes = subject_boxes(clip.frames, np.array([2, 8, 14]))
    assert sorted(boxes) == [2, 8, 14]
    for i, (x, y, w, h) in boxes.items():
        cx = 40 + 5 * i
        assert x <= cx <= x + w and y <= 80 <= y + h  # the box holds the figure's centre
    mask, crop = subject_mask(clip.frames[8], boxes[8])
    # body 33x33, head disc r=10 and two legs: about 1,100 + 300 + 90 pixels
    assert 1200 <= int(mask.sum()) <= 1800


def test_identity_same_figure_other_background_beats_look_alike():
    a = _figure_clip((RED, BLUE), bg_seed=1)
    same = _figure_clip((RED, BLUE), bg_seed=2, scale=0.8, squash=0.75)  # other camera: scale, viewpoint
    other_body = _figure_clip((GREEN, BLUE), bg_seed=3)
    other_head = _figure_clip((RED, YELLOW), bg_seed=4)
    s_same = SIM.compare(a, same, aspect="identity")
    s_body = SIM.compare(a, other_body, aspect="identity")
    s_head = SIM.compare(a, other_head, aspect="identity")
    assert s_same["score"] > 0.7  # scale and squash are normalised away
    assert s_body["score"] < 0.05 and s_head["score"] < 0.05  # one changed part: clearly another
    assert s_same["identity_similarity"] > 0.75 > 0.25 > max(s_body["identity_similarity"], s_head["identity_similarity"])
    emb = SIM.embed(a, aspect="identity")
    own = emb[emb[:, -1] != ReadPath.STACK]  # (and at most one stack view, see test_subject_stack.py)
    assert emb.shape[1] == ROW_DIM and 8 <= len(own) <= 12 and len(emb) - len(own) <= 1  # one layout grid (and texture view) per sampled frame
    assert np.all(own[:, -1] == ReadPath.STILL)  # a still camera is read the still way ...
    again = SIM.embed(a, aspect="identity-moving")  # ... and the moving camera's way only when asked
    assert 1 <= len(again) <= 12 and np.all(again[:, -1] == ReadPath.MOVING)


def test_identity_cuts_a_large_subject_at_a_bounded_size(monkeypatch):
    """Issue 19: GrabCut's time grows with its crop (a subject filling a 448-px frame made one
    identity read cost 15-20 s); a crop over GRABCUT_MAX_PIXELS is cut scaled down and its mask
    scaled back, so the subject is described as before: a close-up of the figure on a 2x larger
    frame still matches the figure at the usual size, and not a figure with another body colour."""
    from sama_model.backends.lite.identity import descriptor as id_descriptor

    sizes = []
    real = cv2.grabCut

    def counting(img, *args):
        sizes.append(img.shape[0] * img.shape[1])
        return real(img, *args)

    monkeypatch.setattr(id_descriptor.cv2, "grabCut", counting)
    # (the per-frame cuts only: the stack view's one cut of its median, test_subject_stack.py, is left out)
    monkeypatch.setattr("sama_model.backends.lite.visual_similarity.stack_view", lambda clip, window: None)
    close = _figure_clip((RED, BLUE), bg_seed=2, zoom=2, T=10)
    emb = SIM.embed(close, aspect="identity")
    assert emb.shape[1] == ROW_DIM and 8 <= emb.shape[0] <= 10
    cap = id_descriptor.GRABCUT_MAX_PIXELS
    # a still camera: located by the temporal median as before; 8 crops of the whole figure (about
    # 47k pixels) cut to the cap; 2 frames locate only the body (11.5k pixels: cut at their own size)
    assert len(sizes) == 10 and max(sizes) <= 1.01 * cap
    assert sum(n >= 0.99 * cap for n in sizes) == 8 and sorted(sizes)[:2] == [109 * 106] * 2
    sizes.clear()
    SIM.embed(close, aspect="identity-moving")  # read the moving camera's way: the cuts are capped too
    assert 1 <= len(sizes) <= 12 and max(sizes) <= 1.01 * cap
    sizes.clear()
    boxes = id_descriptor.subject_boxes(close.frames, np.array([8]))
    mask, crop = id_descriptor.subject_mask(close.frames[8], boxes[8])
    assert mask.shape == crop.shape[:2] and crop.shape[0] * crop.shape[1] > id_descriptor.GRABCUT_MAX_PIXELS
    sizes.clear()
    usual = _figure_clip((RED, BLUE), bg_seed=1)
    SIM.embed(usual, aspect="identity")
    assert len(sizes) == 12 and max(sizes) < cap  # a usual-size subject is cut at its own size
    same = SIM.compare(usual, close, aspect="identity")["score"]
    other = SIM.compare(_figure_clip((GREEN, BLUE), bg_seed=3), close, aspect="identity")["score"]
    assert same > 0.5 > other


def test_identity_without_a_moving_subject_is_undecided():
    still = make_clip(np.repeat(_figure_clip((RED, BLUE), bg_seed=1).frames[:1], 8, axis=0), fps=8.0)
    out = SIM.compare(still, _figure_clip((RED, BLUE), bg_seed=2), aspect="identity")
    assert out["score"] == 0.5 and out["identity_similarity"] is None
    assert not SIM.embed(still, aspect="identity").any()


def test_identity_features_on_constructed_layouts():
    """Exact numbers: layout distance is the RMS difference of the entries; each frame counts by
    its best match, so one mis-located frame moves the median, not the best pair."""
    from sama_model.backends.lite.identity.compare import identity_features, identity_score
    from sama_model.backends.lite.identity.rows import IDENTITY_DIM

    zero, three = np.zeros((1, IDENTITY_DIM), np.float32), np.full((1, IDENTITY_DIM), 3.0, np.float32)
    assert identity_features(zero, zero) == pytest.approx((0.0, 0.0))
    assert identity_features(zero + 1, three) == pytest.approx((2.0, 2.0))
    two = np.concatenate([zero + 1, three])  # a clip with one good and one mis-located frame
    med, best = identity_features(two, zero + 1)
    assert best == pytest.approx(0.0) and med == pytest.approx(0.5)  # (median(0, 2)=1 + median(0)=0) / 2
    # calibrated: identical layouts -> sigmoid(2.3052) = 0.909; 20 units apart -> sigmoid(-2.2048) = 0.0993
    assert identity_score(zero + 1, zero + 1) == pytest.approx(0.9093, abs=1e-4)
    assert identity_score(zero + 1, zero + 21) == pytest.approx(0.0993, abs=1e-4)


def test_colour_layout_ignores_lighting_and_sees_a_changed_part():
    """The layout is relative to the subject's own median colour: a global gain and tint leave it
    almost unchanged, a head of another colour moves it far more."""
    from sama_model.backends.lite.identity.compare import identity_features
    from sama_model.backends.lite.identity.descriptor import COVERAGE_WEIGHT, colour_layout

    view = np.zeros((56, 32, 3), np.uint8)
    view[16:44, 4:28] = RED  # body
    view[2:14, 10:22] = BLUE  # head
    view[44:54, 8:12] = view[44:54, 20:24] = (20, 20, 20)  # legs
    cover = (view.max(-1) > 0).astype(np.float32)
    base = colour_layout(view, cover)
    assert base.shape == (14, 8, 4)
    assert base[..., 3].max() == pytest.approx(COVERAGE_WEIGHT) and base[0, 0, 3] == 0.0
    assert np.abs(base[7, 4, :3]).max() < 1.0  # a body cell: the subject's median colour -> ~0
    lit = np.clip(view.astype(np.float32) * 1.25 + (12, 0, -12), 0, 255).astype(np.uint8) * (cover[..., None] > 0)
    other_head = view.copy()
    other_head[2:14, 10:22] = YELLOW
    d_lit = identity_features(base.reshape(1, -1), colour_layout(lit, cover).reshape(1, -1))[1]
    d_head = identity_features(base.reshape(1, -1), colour_layout(other_head, cover).reshape(1, -1))[1]
    assert d_head > 3 * d_lit and d_head > 5.0


def test_tool_layer_uses_the_calibrated_identity_score():
    """Through cached embeddings the lite backend scores identity with its calibrated score, not cosine."""
    from sama_model.backends.lite.identity.compare import identity_score, identity_similarity

    a = SIM.embed(_figure_clip((RED, BLUE), bg_seed=1), aspect="identity")
    b = SIM.embed(_figure_clip((GREEN, BLUE), bg_seed=3), aspect="identity")
    out = SIM.compare_embeddings(a, b, "identity")
    assert out == {"score": round(identity_score(a, b), 4), "identity_similarity": round(identity_similarity(a, b), 4)}
    assert SIM.compare_embeddings(np.zeros((1, IDENTITY_DIM)), b, "identity") == {"score": 0.5, "identity_similarity": None}
    assert SIM.compare_embeddings(a, b, "content") is None


# -- rendering marks: overlays, banding and outlines, measured independently of content ---------
def _overlay(img: np.ndarray, kind: str, seed: int = 0) -> np.ndarray:
    """The overlays of a rendering pipeline: every third row darkened (scanlines), a 5-px dot grid
    (halftone), strong per-pixel noise (grain), values rounded to 64-steps (posterize)."""
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    f = img.astype(np.float32)
    if kind == "scanlines":
        f = f * np.where(yy[..., None] % 3 == 0, 0.78, 1.0)
    elif kind == "halftone":
        f = f * (1 - 0.22 * ((((xx % 5) - 2) ** 2 + ((yy % 5) - 2) ** 2) < 3)[..., None])
    elif kind == "grain":
        f = f + np.random.default_rng(seed).normal(0, 14, f.shape)
    elif kind == "posterize":
        f = np.round(f / 64.0) * 64.0
    return np.clip(f, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("kind,mark", [("scanlines", "scanlines"), ("halftone", "halftone"), ("grain", "grain"),
                                       ("posterize", "posterization")])
def test_each_overlay_raises_its_own_mark(kind, mark):
    from sama_model.backends.lite.perception.features import MARK_SCALE, rendering_marks

    base = cv2.resize(_layout(21), (192, 144))
    plain, marked = rendering_marks(base), rendering_marks(_overlay(base, kind))
    j = MARK_NAMES.index(mark)
    assert marked[j] - plain[j] > 0.5 * MARK_SCALE[j]  # at least half a typical spread


def test_style_ranks_the_same_rendering_over_the_same_palette():
    """Four candidates with the reference's palette and other content: only one shares its overlay."""
    ref = make_clip([_overlay(cv2.resize(_layout(31), (192, 144)), "scanlines")] * 4)
    cands = {k: make_clip([_overlay(cv2.resize(_layout(32 + i), (192, 144)), k, seed=i)] * 4)
             for i, k in enumerate(["halftone", "scanlines", "grain", "none"])}
    scores = {k: SIM.compare(ref, c, aspect="style")["score"] for k, c in cands.items()}
    assert max(scores, key=scores.get) == "scanlines"
    out = SIM.compare(ref, cands["scanlines"], aspect="style")
    assert set(out) >= {"score", "palette_texture_cosine", "marks_distance"}
    ea, eb = SIM.embed(ref, aspect="style"), SIM.embed(cands["scanlines"], aspect="style")
    cached = SIM.compare_embeddings(ea, eb, "style")
    assert cached == {k: out[k] for k in ("score", "palette_texture_cosine", "marks_distance")}


def _cutout_clip(piece: int, bg_seed: int, scale: float = 1.0, T: int = 24) -> "object":
    """Issue 19's RID scene in small: a photograph cut-out (a textured piece with its own outline,
    ~56 px across) gliding over textured footage that a virtual camera pans across."""
    photo = cv2.GaussianBlur(textured_image(200, 200, seed=7), (0, 0), 1.5)
    photo = np.clip(photo.astype(np.int16) * (1.2, 0.8, 0.5) + (40, 10, 0), 0, 255).astype(np.uint8)  # a warm photo
    outline = [((28, 28), (26, 17), 20), ((28, 28), (16, 26), -35)][piece]  # another piece: another place and shape
    y0, x0 = (20, 30) if piece == 0 else (110, 120)
    tile = photo[y0:y0 + 56, x0:x0 + 56]
    mask = np.zeros((56, 56), np.uint8)
    cv2.ellipse(mask, outline[0], outline[1], outline[2], 0, 360, 1, -1)
    cv2.circle(mask, (44, 40), 9, 1, -1)
    size = max(8, round(56 * scale))
    tile, mask = cv2.resize(tile, (size, size)), cv2.resize(mask, (size, size), interpolation=cv2.INTER_NEAREST)
    footage = (textured_image(300, 480, seed=bg_seed) * (0.5, 0.7, 0.9)).astype(np.uint8)  # cool, dimmer footage
    frames = []
    for t in range(T):
        f = footage[20 + t:260 + t, 40 + 3 * t:360 + 3 * t].copy()  # the camera pans right and down
        x, y = 60 + 8 * t, 90 + 2 * t
        roi = f[y:y + size, x:x + size]
        roi[mask > 0] = tile[mask > 0]
        frames.append(f)
    return make_clip(np.stack(frames), fps=10.0)


def test_identity_verdict_on_a_cutout_survives_the_codec(tmp_path):
    """Issue 19: the same cut-out over other footage at another scale is the same individual,
    another piece of the same photograph is not, and re-encoding both clips at CRF 20 or 30 leaves
    both verdicts unchanged (the mover is located from camera-compensated flow, not a temporal median)."""
    from mvx_tasks.synth.encode import encode_mp4
    from mvx_tasks.video_decoder import load_video
    from sama_model.skills.multi_video_comparison.rid import RID_IDENTITY_THRESHOLD

    clips = {"a": _cutout_clip(0, 1), "same": _cutout_clip(0, 2, scale=0.85), "other": _cutout_clip(1, 3)}
    verdicts = {}
    for crf in (20, 30):
        dec = {k: load_video(str(encode_mp4(c.frames, tmp_path / f"{k}_{crf}.mp4", fps=10, crf=crf))) for k, c in clips.items()}
        same = LiteVisualSimilarity().compare(dec["a"], dec["same"], aspect="identity")["score"]
        other = LiteVisualSimilarity().compare(dec["a"], dec["other"], aspect="identity")["score"]
        verdicts[crf] = (same >= RID_IDENTITY_THRESHOLD, other >= RID_IDENTITY_THRESHOLD)
    # (the other piece scores 0.29 / 0.49 at CRF 20 / 30 with the moving-camera texture score: this smooth
    # noise photograph's pieces correlate 0.33-0.41, above the composite's different subjects, 0.17 on average)
    assert verdicts[20] == verdicts[30] == (True, False)


def test_mover_boxes_follow_the_cutout_under_a_panning_camera():
    """The camera pans 3 px a frame right and 1 down: mover_boxes reads that motion (the corners' largest
    move, input pixels) and boxes the travelling cut-out, whose true centre lies in every sampled box."""
    clip = _cutout_clip(0, 1)
    idx = np.unique(np.linspace(0, clip.n_frames - 1, 12).astype(int))
    boxes, camera = id_descriptor.mover_boxes(clip.frames, idx)
    assert camera == pytest.approx(3.0, abs=0.4) and camera >= id_descriptor.CAMERA_STILL_PX
    inside = 0
    for i, (x, y, w, h) in boxes.items():
        cx, cy = 60 + 8 * i + 28, 90 + 2 * i + 28  # the cut-out's centre in frame i (see _cutout_clip)
        inside += x <= cx <= x + w and y <= cy <= y + h
    assert len(boxes) == len(idx) and inside == len(idx)


def test_blurred_cut_only_under_a_moving_camera(monkeypatch):
    """A still camera's clip keeps the temporal-median locator and the unblurred cut (MVX-Synth's
    descriptor): its rows do not change when SEGMENT_BLUR does; the same clip read the moving camera's
    way (``moving_path``) and a panning camera's rows do."""
    scene = _cutout_clip(0, 1, T=1).frames[0]
    frames = np.stack([scene] * 24)
    for t in range(len(frames)):  # a two-coloured patch crossing the still view
        frames[t, 150:180, 20 + 9 * t:50 + 9 * t] = (230, 40, 40)
        frames[t, 160:170, 30 + 9 * t:40 + 9 * t] = (40, 40, 230)
    still = make_clip(frames, fps=10.0)
    idx = np.unique(np.linspace(0, len(frames) - 1, 12).astype(int))
    assert id_descriptor.mover_boxes(frames, idx)[1] < id_descriptor.CAMERA_STILL_PX
    pan = _cutout_clip(0, 1)
    reads = {"still": (still, False), "still read moving": (still, True), "pan": (pan, False)}

    def read() -> dict:
        return {k: id_descriptor.identity_descriptor(c.frames, moving_path=m) for k, (c, m) in reads.items()}

    before = read()
    monkeypatch.setattr(id_descriptor, "SEGMENT_BLUR", 4.0 / 320)
    after = read()
    assert np.all(before["still"][:, -1] == ReadPath.STILL) and np.array_equal(before["still"], after["still"])
    for k in ("still read moving", "pan"):
        assert np.all(before[k][:, -1] == ReadPath.MOVING) and not np.array_equal(before[k], after[k])


def _rows(views: np.ndarray, camera: float, layout: float = 1.0, path: float = ReadPath.MOVING) -> np.ndarray:
    """Descriptor rows built by hand: a constant layout, the given texture views, the camera's motion
    and the path that read them."""
    k = len(views)
    return np.concatenate([np.full((k, IDENTITY_DIM), layout), views.reshape(k, -1), np.full((k, 1), camera),
                           np.full((k, 1), path)], axis=1)


def test_texture_correlation_on_constructed_views():
    """Exact numbers: the same texture correlates 1, its negative -1, a flat channel 0 (L weighs 1,
    a and b 1/2 each, halved); pixels only one view covers, or too few shared pixels, do not count."""
    rng = np.random.default_rng(0)
    tex = rng.normal(0, 10, (id_rows.VIEW_H, id_rows.VIEW_W, 3)) + 100
    cover = np.ones((id_rows.VIEW_H, id_rows.VIEW_W, 1))
    a = np.concatenate([tex, cover], -1)[None]
    neg = np.concatenate([200 - tex, cover], -1)[None]
    flat_ab = np.concatenate([tex[..., :1], np.full_like(tex[..., 1:], 5.0), cover], -1)[None]
    m = id_texture.texture_correlations(a, np.concatenate([a, neg, flat_ab]))
    assert m[0] == pytest.approx([1.0, -1.0, 0.5], abs=1e-6)
    half = a.copy()
    half[0, :, 16:, :3] = 0  # another texture where a alone covers the view ...
    half[0, :, 16:, 3] = 0.4  # ... under the coverage threshold: ignored
    assert id_texture.texture_correlations(a, half)[0, 0] == pytest.approx(1.0, abs=1e-6)
    sliver = a.copy()
    sliver[0, :, :, 3] = 0
    sliver[0, :2, :8, 3] = 1  # 16 shared pixels: under TEXTURE_MIN_PIXELS
    assert id_texture.texture_correlations(a, sliver)[0, 0] == 0.0
    # features: each view's best match (median over both clips) and the mean of the 6 best pairs
    two = np.concatenate([a, neg])
    med, top = id_compare.texture_features(_rows(two, 2.0), _rows(a, 2.0))
    assert med == pytest.approx((np.median([1, -1]) + 1) / 2) and top == pytest.approx(0.0)


def test_texture_counts_when_the_cameras_move():
    """Two still cameras, or a still and a slowly moving one (under CAMERA_MOVING_PX), keep the layout
    score fitted on MVX-Synth, exactly as layout-only rows do; two moving cameras, or a still and a
    clearly moving one once the still clip is read the moving camera's way (moving_rereads), add the
    texture score (MOVING_SCORE_WEIGHTS)."""
    rng = np.random.default_rng(1)
    view = np.concatenate([rng.normal(100, 10, (1, id_rows.VIEW_H, id_rows.VIEW_W, 3)),
                           np.ones((1, id_rows.VIEW_H, id_rows.VIEW_W, 1))], -1)
    other_view = 200 - view * (1, 1, 1, 0) + (0, 0, 0, 1)
    still = _rows(view, 0.5, path=ReadPath.STILL)
    slow = id_compare.CAMERA_MOVING_PX - 0.01

    layout_only = id_compare.identity_result(np.ones((1, IDENTITY_DIM)), np.ones((1, IDENTITY_DIM)))
    assert layout_only == {"score": 0.9093, "identity_similarity": 1.0}
    assert id_compare.identity_result(still, _rows(view, 0.0, path=ReadPath.STILL)) == layout_only
    assert id_compare.identity_result(still, _rows(view, slow)) == layout_only
    assert id_compare.moving_rereads(still, _rows(view, slow)) == (False, False)
    w = id_compare.MOVING_SCORE_WEIGHTS
    z = w[-1] + w[2] * 1.0 + w[3] * 1.0  # layout distances 0; the same texture correlates 1
    same = {"score": round(1 / (1 + np.exp(-z)), 4), "identity_similarity": 1.0, "texture": [1.0, 1.0]}
    assert id_compare.identity_result(_rows(view, 2.0), _rows(view, 0.75)) == same
    assert id_compare.moving_rereads(_rows(view, 2.0), _rows(view, 0.75)) == (False, False)
    # a still clip and a clearly moving one: the still one is read again the moving camera's way
    assert id_compare.moving_rereads(still, _rows(view, 2.0)) == (True, False)
    assert id_compare.moving_rereads(_rows(view, id_compare.CAMERA_MOVING_PX), still) == (False, True)
    assert id_compare.moving_rereads(None, _rows(view, 2.0)) == (False, False)
    assert id_compare.identity_result(_rows(view, 0.5), _rows(view, 2.0)) == same
    other = id_compare.identity_result(_rows(other_view, 0.5), _rows(view, 2.0))
    assert other["texture"] == [-1.0, -1.0] and other["score"] < 0.01
    # not read again (or its moving read found no subject): the layout score on the rows there are
    assert id_compare.identity_result(still, _rows(view, 2.0)) == layout_only


def test_a_pair_near_the_camera_gate_gives_the_other_sides_score():
    """A still camera beside one within GATE_MARGIN_PX of CAMERA_MOVING_PX: the still clip is read both ways
    (its still read's rows, then the moving read's), the score is the gate's side as before, and ``gate_score``
    is the other side's: below the gate the layout score (own reads) with the texture score beside it, above it the
    other way round. Away from the gate, or when the moving read found no subject, no ``gate_score``."""
    rng = np.random.default_rng(2)
    view = np.concatenate([rng.normal(100, 10, (1, id_rows.VIEW_H, id_rows.VIEW_W, 3)),
                           np.ones((1, id_rows.VIEW_H, id_rows.VIEW_W, 1))], -1)
    still_both = np.concatenate([_rows(view, 0.5, layout=3.0, path=ReadPath.STILL), _rows(view, 0.5)])
    w_layout, w_tex = id_compare.SCORE_WEIGHTS, id_compare.MOVING_SCORE_WEIGHTS
    p_layout = round(1 / (1 + np.exp(-(w_layout[-1] + (w_layout[0] + w_layout[1]) * 2.0))), 4)  # layouts 2 apart
    p_tex = round(1 / (1 + np.exp(-(w_tex[-1] + w_tex[2] + w_tex[3]))), 4)  # moving reads: the same layout, texture 1
    below, above = id_compare.CAMERA_MOVING_PX - 0.1, id_compare.CAMERA_MOVING_PX + 0.1
    got = id_compare.identity_result(still_both, _rows(view, below))
    assert (got["score"], got["gate_score"]) == (p_layout, p_tex) and "texture" not in got
    got = id_compare.identity_result(_rows(view, above), still_both)
    assert (got["score"], got["gate_score"]) == (p_tex, p_layout) and got["texture"] == [1.0, 1.0]
    far = id_compare.CAMERA_MOVING_PX + id_compare.GATE_MARGIN_PX + 0.01
    assert "gate_score" not in id_compare.identity_result(still_both, _rows(view, far))
    still_only = _rows(view, 0.5, layout=3.0, path=ReadPath.STILL)
    assert id_compare.identity_result(still_only, _rows(view, below)) == {"score": p_layout,
                                                                         "identity_similarity": round(float(np.exp(-2.0 / id_compare.SIMILARITY_SCALE)), 4)}
    # the tool's pair rule: where a camera moves, both stacks are read first (here they find no view); then near
    # the gate the still clip is read both ways; far above it the moving way only; two still cameras: nothing
    from sama_model.backends.lite.visual_similarity import BOTH_IDENTITY, MOVING_IDENTITY, STACKED_IDENTITY

    pair = LiteVisualSimilarity().pair_aspects
    assert pair(still_only, _rows(view, below), "identity") == (STACKED_IDENTITY, STACKED_IDENTITY)
    assert pair(id_rows.with_stack(still_only, None), _rows(view, below), "identity") == ("identity", STACKED_IDENTITY)
    assert pair(still_only, _rows(view, 0.3), "identity") == ("identity", "identity")
    no_view = [id_rows.with_stack(r, None) for r in (still_only, _rows(view, below), _rows(view, above),
                                                      _rows(view, far))]
    assert pair(no_view[0], no_view[1], "identity") == (BOTH_IDENTITY, "identity")
    assert pair(no_view[2], no_view[0], "identity") == ("identity", BOTH_IDENTITY)
    assert pair(no_view[0], no_view[3], "identity") == (MOVING_IDENTITY, "identity")
    edge = id_rows.with_stack(_rows(view, id_compare.CAMERA_MOVING_PX - id_compare.GATE_MARGIN_PX - 0.01), None)
    assert pair(no_view[0], edge, "identity") == ("identity", "identity")
    assert id_compare.both_reads(_rows(view, 0.9), _rows(view, below)) == (False, False)  # both cameras move
    from sama_model.tools.visual_similarity import VisualSimilarityTool

    args = {"video_a": "Video 1", "video_b": "Video 2", "aspect": "identity", "start": None, "end": None}
    text = VisualSimilarityTool.render(None, args, {"score": 0.1984, "gate_score": 0.9512})
    assert text.endswith("= 0.198 (0.951 across the camera gate)")
    assert VisualSimilarityTool.render(None, args, {"score": 0.1984}).endswith("= 0.198")


class _Videos:
    """The tool's videos, clips built in the test (``clips`` may be updated between calls: new clips, new reads)."""

    def __init__(self, clips: dict, tag: str) -> None:
        self.clips, self.tag = clips, tag

    def clip(self, label: str):
        return self.clips[label]

    def content_hash(self, label: str) -> str:
        return f"{self.tag}-{label}"


def test_the_tool_keeps_only_the_most_recent_embeddings(monkeypatch):
    """The tool's embedding cache is bounded (MVX_EMBED_CACHE_SIZE): a long run does not keep every video's."""
    from sama_model.backends.models._runtime import SharedModels
    from sama_model.tools import visual_similarity as tool_module

    monkeypatch.setattr(tool_module, "_EMBEDDINGS", SharedModels(maxsize=2))
    embedded = []

    class Counting(LiteVisualSimilarity):
        def embed(self, clip, window=(None, None), aspect="content"):
            embedded.append(clip)
            return super().embed(clip, window, aspect)

    clips = {k: _figure_clip((RED, BLUE), bg_seed=i) for i, k in enumerate("ABC", start=1)}
    tool = tool_module.VisualSimilarityTool(backend=Counting(), backend_name="lite-test-bound",
                                            videos=_Videos(clips, "test-bound"))
    first = tool.embeddings("A", (None, None), "content")
    for label in "BC":
        tool.embeddings(label, (None, None), "content")
    assert len(embedded) == 3 and len(tool_module._EMBEDDINGS._items) == 2
    again = tool.embeddings("A", (None, None), "content")  # evicted by C: embedded again, the same
    assert len(embedded) == 4 and np.array_equal(first, again)
    tool.embeddings("C", (None, None), "content")  # still kept
    assert len(embedded) == 4


def test_a_still_clip_is_read_the_moving_way_only_beside_a_clearly_moving_camera(monkeypatch):
    """The tool reads a still camera's clip a second time (the moving camera's way) only when its partner's
    camera clearly moves and a clip has no stack view, and then cuts the moving clip's frames (deferred until then),
    and scores that pair as ``compare`` does; two still clips are read once each, and their stacks not at all. With
    both stack views, the pair compares those and reads nothing again: the moving clip's frames are never cut."""
    from sama_model.backends.lite import visual_similarity as similarity
    from sama_model.tools.visual_similarity import VisualSimilarityTool, clear_embedding_cache

    real_stack = similarity.stack_view
    monkeypatch.setattr(similarity, "stack_view", lambda clip, window: None)
    reads = []
    real = id_descriptor.identity_descriptor
    monkeypatch.setattr("sama_model.backends.lite.visual_similarity.identity_descriptor",
                        lambda frames, **kw: reads.append("moving" if kw.get("moving_path") else "own")
                        or real(frames, **kw))
    real_cuts = id_descriptor.cut_descriptor
    monkeypatch.setattr("sama_model.backends.lite.visual_similarity.cut_descriptor",
                        lambda frames, located: reads.append("cuts") or real_cuts(frames, located))
    still_a, still_b, pan = (_figure_clip((RED, BLUE), bg_seed=1), _figure_clip((RED, BLUE), bg_seed=2),
                             _cutout_clip(0, 1))
    clips = {"A": still_a, "B": still_b, "P": pan}

    tool = VisualSimilarityTool(backend=LiteVisualSimilarity(), backend_name="lite-test-reread",
                                videos=_Videos(clips, "test-reread"))
    clear_embedding_cache()
    two_still = tool.forward("A", "B", aspect="identity")
    assert reads == ["own", "own"] and "texture" not in two_still
    reads.clear()
    beside_pan = tool.forward("A", "P", aspect="identity")
    # the pan's own (deferred) read; A read again the moving way and the pan's frames cut, in one round
    assert reads == ["own", "moving", "cuts"] and "texture" in beside_pan
    assert beside_pan["score"] == LiteVisualSimilarity().compare(still_a, pan, aspect="identity")["score"]
    clear_embedding_cache()
    monkeypatch.setattr(similarity, "stack_view", real_stack)
    reads.clear()
    clips.update(A=_figure_clip((RED, BLUE), bg_seed=1), P=_cutout_clip(0, 1))  # new clips: nothing memoised
    stacked = tool.forward("A", "P", aspect="identity")
    assert reads == ["own", "own"] and "stack_texture" in stacked and "texture" not in stacked  # each read once
    # two still cameras never read their stacks (the pair's score is the layout score either way)
    stacks = []
    monkeypatch.setattr(similarity, "stack_view", lambda clip, window: stacks.append(clip) or real_stack(clip, window))
    clips.update(A=_figure_clip((RED, BLUE), bg_seed=1), B=_figure_clip((RED, BLUE), bg_seed=2))
    clear_embedding_cache()
    assert tool.forward("A", "B", aspect="identity") == two_still and stacks == []
    assert len(tool.forward("A", "P", aspect="identity")) and len(stacks) == 1  # A's (P's was read above)
    assert LiteVisualSimilarity().compare(pan, _cutout_clip(0, 2, scale=0.85), aspect="identity")["score"] > 0.9
    clear_embedding_cache()


def test_a_moving_clip_whose_deferred_cuts_find_no_subject_leaves_the_pair_undecided(monkeypatch):
    """A moving camera's clip is first read without its cuts; when its pair needs them (no stack view here) and they
    find no subject, the pair is undecided (no subject: 0.5, identity_similarity None), as when any read finds none,
    not compared on the deferred read."""
    from sama_model.backends.lite import visual_similarity as similarity
    from sama_model.tools.visual_similarity import VisualSimilarityTool, clear_embedding_cache

    monkeypatch.setattr(similarity, "stack_view", lambda clip, window: None)
    real = id_descriptor._subject_rows
    monkeypatch.setattr(id_descriptor, "_subject_rows", lambda frames, boxes, camera, path, min_pixels:
                        [] if path == ReadPath.MOVING else real(frames, boxes, camera, path, min_pixels))
    clips = {"A": _figure_clip((RED, BLUE), bg_seed=3), "P": _cutout_clip(0, 3)}

    tool = VisualSimilarityTool(backend=LiteVisualSimilarity(), backend_name="lite-test-empty-cut",
                                videos=_Videos(clips, "test-empty-cut"))
    clear_embedding_cache()
    got = tool.forward("A", "P", aspect="identity")
    assert (got["score"], got["identity_similarity"]) == (0.5, None)
    assert LiteVisualSimilarity().compare(clips["P"], clips["A"], aspect="identity")["identity_similarity"] is None
    empty, still = id_rows.path_row(2.0, ReadPath.EMPTY_CUT), _rows(np.zeros((1, id_rows.VIEW_H, id_rows.VIEW_W, 4)), 0.3)
    assert id_compare.identity_result(empty, still) \
        == {"score": 0.5, "identity_similarity": None}
    clear_embedding_cache()


def test_descriptor_rows_carry_the_view_and_the_camera():
    """Each row: the layout, the texture view of the same upright view, and the camera's motion as
    mover_boxes reads it (the same in every row)."""
    pan = _cutout_clip(0, 1)
    rows = id_descriptor.identity_descriptor(pan.frames)
    idx = np.unique(np.linspace(0, len(pan.frames) - 1, 12).astype(int))
    camera = id_descriptor.mover_boxes(pan.frames, idx)[1]
    assert rows.shape[1] == ROW_DIM and camera >= id_descriptor.CAMERA_STILL_PX
    assert np.allclose(rows[:, -2], camera) and id_rows.camera_motion(rows) == pytest.approx(camera)
    assert np.all(rows[:, -1] == ReadPath.MOVING)  # a moving camera is read the moving way only
    cover = rows[:, IDENTITY_DIM:IDENTITY_DIM + id_rows.TEXTURE_DIM].reshape(-1, id_rows.VIEW_H, id_rows.VIEW_W, 4)[..., 3]
    assert cover.min() >= 0 and cover.max() <= 1 and (cover > 0.5).mean() > 0.3  # the upright cut-out fills its view
