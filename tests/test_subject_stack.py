"""The subject read once from its aligned stack (:mod:`sama_model.backends.lite.identity.stack`): exact texture
correlations of constructed views, rigid partners of constructed followed objects, the identity score that uses the
stack views only where the cameras move, and the cut-out scene under a panning camera."""
import numpy as np
import pytest

from sama_model.backends.lite.identity import compare as id_compare
from sama_model.backends.lite.identity import rows as id_rows
from sama_model.backends.lite.identity.rows import ReadPath
from sama_model.backends.lite.identity import stack as ss
from sama_model.backends.lite.identity.rows import IDENTITY_DIM, ROW_DIM
from sama_model.backends.lite.movers.follow import Candidate

V = ss.VIEW


def _view(lab: np.ndarray, cover: np.ndarray | None = None) -> np.ndarray:
    cover = np.ones((V, V), np.float32) if cover is None else cover
    return np.concatenate([lab.reshape(-1), cover.reshape(-1)]).astype(np.float32)


def _texture(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    # a smooth texture (the views are compared blurred): 8 x 8 noise enlarged
    small = rng.normal(0, 20, (8, 8, 3))
    return np.kron(small, np.ones((5, 5, 1))) + 120


def test_stack_texture_on_constructed_views():
    """The same view correlates 1, its negative -1 (unshifted); a view shifted by SHIFT pixels still finds 1 (best over shifts),
    one shifted far does not; views sharing fewer than id_texture.TEXTURE_MIN_PIXELS covered pixels correlate 0."""
    lab = _texture()
    assert ss.stack_texture(_view(lab), _view(lab)) == pytest.approx(1.0, abs=1e-5)
    assert ss.stack_texture(_view(lab), _view(240 - lab)) < 0  # (-1 unshifted; its best shift is still negative)
    shifted = np.roll(lab, (ss.SHIFT, -ss.SHIFT), axis=(0, 1))
    assert ss.stack_texture(_view(lab), _view(shifted)) > 0.99  # (not 1: the blur at the rolled-in rim)
    assert ss.stack_texture(_view(lab), _view(np.roll(lab, 12, axis=1))) < 0.5
    sliver = np.zeros((V, V), np.float32)
    sliver[:2, :8] = 1  # 16 covered pixels
    assert ss.stack_texture(_view(lab), _view(lab, sliver)) == 0.0
    w, b = ss.STACK_WEIGHTS
    assert ss.stack_score(-b / w) == pytest.approx(0.5)
    assert ss.stack_score(1.0) == pytest.approx(1 / (1 + np.exp(-(w + b))))


def _object(steps, image, size, probability):
    c = Candidate(np.array(steps), np.array(image, float), np.array(image, float), float(size))
    c.probability = probability
    return c


def test_partners_are_the_probable_objects_moving_rigidly_with_the_subject():
    """Offsets in frame pixels (small-frame pixels over the scale): a probable object at a steady offset is a part;
    one that drifts, one too far, one improbable and one sharing under three frames are not."""
    steps = list(range(6))
    top = _object(steps, [(10 + 3 * k, 20) for k in steps], 8, 0.99)
    part = _object(steps, [(16 + 3 * k, 24) for k in steps], 6, 0.9)  # offset (6, 4) in every frame
    drift = _object(steps, [(16 + 5 * k, 24) for k in steps], 6, 0.9)
    far = _object(steps, [(40 + 3 * k, 20) for k in steps], 6, 0.9)  # 30 px: over two sizes
    unlikely = _object(steps, [(16 + 3 * k, 24) for k in steps], 6, 0.2)
    brief = _object([0, 1], [(16, 24), (19, 24)], 6, 0.9)
    got = ss._partners([top, part, drift, far, unlikely, brief], scale=0.5)
    assert got == [(12.0, 8.0, 12.0)]


def _rows(camera: float, layout: float = 1.0, path: float = ReadPath.MOVING, k: int = 3) -> np.ndarray:
    return np.concatenate([np.full((k, IDENTITY_DIM), layout), np.zeros((k, ROW_DIM - IDENTITY_DIM - 2)),
                           np.full((k, 1), camera), np.full((k, 1), path)], axis=1)


def test_identity_uses_the_stack_views_where_the_cameras_move():
    """Two moving cameras with stack views: the score is the stack score of their texture correlation (no
    per-frame texture read, no second read of a still clip); two still cameras keep the layout score fitted on
    MVX-Synth exactly as without the views; a clip without a view leaves the pair as before."""
    lab = _texture(1)
    same, other = _view(lab), _view(240 - lab)
    moving, still = _rows(2.0), _rows(0.3, path=ReadPath.STILL)
    a = id_rows.with_stack(moving, same)
    assert a.shape == (4, ROW_DIM) and a[-1, -1] == ReadPath.STACK and a[-1, -2] == 2.0
    got = id_compare.identity_result(a, id_rows.with_stack(_rows(0.9), same))
    assert got["score"] == round(ss.stack_score(1.0), 4) and got["stack_texture"] == pytest.approx(1.0, abs=1e-4)
    assert got["identity_similarity"] == 1.0 and "texture" not in got
    low = id_compare.identity_result(a, id_rows.with_stack(_rows(0.9), other))
    assert low["score"] == round(ss.stack_score(low["stack_texture"]), 4) < 0.01 and low["stack_texture"] < 0
    layout_only = id_compare.identity_result(still, still)
    assert id_compare.identity_result(id_rows.with_stack(still, same), id_rows.with_stack(still, other)) == layout_only
    # a still clip beside a clearly moving one: both views compared, and no second read of the still clip
    mixed = id_compare.identity_result(id_rows.with_stack(still, same), a)
    assert mixed["score"] == round(ss.stack_score(1.0), 4)
    assert id_compare.moving_rereads(id_rows.with_stack(still, same), a) == (False, False)
    assert id_compare.moving_rereads(still, a) == (True, False)  # without the still clip's view: as before
    assert id_rows.with_stack(None, same) is None
    # a stack read that found no view is marked as read, and the pair is scored as without it
    none = id_rows.with_stack(moving, None)
    assert none.shape == (4, ROW_DIM) and not none[-1, :-2].any() and id_rows.has_path(none, ReadPath.STACK)
    assert not id_rows.has_path(moving, ReadPath.STACK) and id_rows.split_stack(none)[1] is None
    assert id_compare.identity_result(none, a) == id_compare.identity_result(moving, a)
    # with both views the gate is any clearly moving camera (STACK_MOVING_PX), not CAMERA_MOVING_PX
    slow = id_compare.CAMERA_MOVING_PX - 0.3
    assert id_compare.STACK_MOVING_PX < slow
    stacked = id_compare.identity_result(id_rows.with_stack(still, same), id_rows.with_stack(_rows(slow), same))
    assert stacked["score"] == round(ss.stack_score(1.0), 4)
    assert id_compare.identity_result(still, _rows(slow)) == layout_only
    near = id_compare.identity_result(id_rows.with_stack(still, same),
                                    id_rows.with_stack(_rows(id_compare.STACK_MOVING_PX + 0.1), other))
    assert near["gate_score"] == layout_only["score"] and near["score"] < 0.01  # the other side of the gate


def test_a_moving_cameras_cuts_are_read_only_where_the_pair_needs_them():
    """A moving camera's read defers its per-frame cuts to one row; a pair of stack views not near the camera gate is
    scored from the views alone (the identity similarity from their colour layouts); a pair near the gate, or without
    both views, asks for the cuts, and comparing it without them is refused."""
    lab = _texture(1)
    same, other = _view(lab), _view(240 - lab)
    head = id_rows.path_row(2.0, ReadPath.DEFERRED)
    assert id_rows.has_path(head, ReadPath.DEFERRED) and id_rows.camera_motion(head) == 2.0
    assert not id_rows.has_path(_rows(2.0), ReadPath.DEFERRED)
    still = _rows(0.3, path=ReadPath.STILL)
    a = id_rows.with_stack(head, same)
    assert id_compare.cut_reads(a, id_rows.with_stack(still, same)) == (False, False)
    assert id_compare.cut_reads(id_rows.with_stack(still, other), a) == (False, False)
    got = id_compare.identity_result(a, id_rows.with_stack(_rows(0.9), same))
    assert got["score"] == round(ss.stack_score(1.0), 4) and got["identity_similarity"] == 1.0
    low = id_compare.identity_result(a, id_rows.with_stack(_rows(0.9), other))
    far = id_compare.stack_features(same, other)[0]
    assert far > 5 and low["identity_similarity"] == round(float(np.exp(-far / id_compare.SIMILARITY_SCALE)), 4)
    # no view on the partner, or a camera near the gate beside a still one: the cuts are needed
    assert id_compare.cut_reads(a, id_rows.with_stack(still, None)) == (True, False)
    near = id_rows.with_stack(id_rows.path_row(id_compare.STACK_MOVING_PX + 0.1, ReadPath.DEFERRED), same)
    assert id_compare.cut_reads(id_rows.with_stack(still, same), near) == (False, True)
    with pytest.raises(ValueError, match="per-frame cuts"):
        id_compare.identity_result(id_rows.with_stack(still, same), near)
    assert id_compare.cut_reads(None, a) == (False, False)


def test_stack_view_reads_the_cutout_under_a_panning_camera():
    """Issue 19's RID scene in small (a photograph cut-out over panning footage): the same cut-out over other
    footage at another scale correlates far above another piece of the same photograph."""
    from test_lite_similarity import _cutout_clip

    views = {k: ss.stack_view(c) for k, c in
             {"a": _cutout_clip(0, 1), "same": _cutout_clip(0, 2, scale=0.85), "other": _cutout_clip(1, 3)}.items()}
    assert all(v is not None and v.shape == (ss.STACK_DIM,) for v in views.values())
    cover = views["a"][3 * V * V:].reshape(V, V)
    assert 0.5 < (cover > 0.5).mean() < 0.95  # the cut-out's outline, not its square window
    same, other = ss.stack_texture(views["a"], views["same"]), ss.stack_texture(views["a"], views["other"])
    assert same > 0.8 and other < 0.5 and ss.stack_score(same) > 0.9 > 0.5 > ss.stack_score(other)


def test_foreground_extent_is_the_aligned_foreground_at_the_followed_centre():
    """A 20 x 12 foreground box moving 3 px a step, followed by a template on its left part: the part at the centre that
    is foreground in at least FOREGROUND_SHARE of the frames is the whole box (its larger side, 20), not the template;
    a blob passing through once, and another frame's clutter, stay out; a centre off any foreground gives 0."""
    steps = list(range(6))
    masks, centres = [], []
    for k in steps:
        m = np.zeros((80, 120), bool)
        m[30:42, 10 + 3 * k:30 + 3 * k] = True  # the subject
        if k == 2:
            m[30:42, 30 + 3 * k:50 + 3 * k] = True  # something touching it in one frame only
        masks.append(m)
        centres.append((14 + 3 * k, 36))  # the followed template: the subject's left part
    top = _object(steps, centres, 8, 0.99)
    assert ss.foreground_extent(masks, top, radius=25) == 20.0
    off = _object(steps, [(100, 70)] * 6, 8, 0.99)
    assert ss.foreground_extent(masks, off, radius=10) == 0.0
    # under half of the frames: the box's pixels are foreground in 2 of 6, so nothing at the centre
    sparse = [m if k < 2 else np.zeros_like(m) for k, m in enumerate(masks)]
    assert ss.foreground_extent(sparse, top, radius=25) == 0.0


@pytest.mark.parametrize("k", [7, 8])
def test_the_stacks_medians_equal_numpys(k):
    """The stack's median image (over the frames that see each pixel) and its spread's medians are numpy's values bit
    for bit, for odd and even stacks, with pixels that some frames do not see and one that none does."""
    rng = np.random.default_rng(k)
    crops = rng.integers(0, 256, (k, 9, 9, 3), dtype=np.uint8)
    seen = np.ones((k, 9, 9), bool)
    seen[: k // 2, :3] = False  # the window's top rows left the frame in the first frames
    seen[:, 8, 8] = False  # a pixel no frame sees
    values = np.where(seen[..., None], crops.astype(np.float32), np.nan)
    want = np.zeros(crops.shape[1:], np.float32)
    any_seen = seen.any(axis=0)
    want[any_seen] = np.nanmedian(values[:, any_seen], axis=0)
    assert np.array_equal(ss._median_image(crops, seen), want.astype(np.uint8))
    floats = rng.normal(100, 30, (k, 9, 9, 3)).astype(np.float32)
    assert np.array_equal(ss._median(floats), np.median(floats, axis=0))
