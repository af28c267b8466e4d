"""The main mover's action read from dense optical flow, with no discrete choice for noise to flip.

Why: the texture-following actor (:mod:`.movers.actor`) is a chain of choices (which corners the camera
fit takes, which mover seeds the follow, which turn and size each step keeps, which naming
threshold a measure crosses), and codec noise moves each of them: ±1 grey level of noise, a
quarter of a CRF step, moved its names in a fifth of the real-footage composite's AM videos. Here
every step is a weighted average, a least-squares fit or a smooth score, which moves about as
much as its input does:

1. Dense flow (Farneback) between consecutive sampled frames of a small grey copy.
2. The camera: an affine map fitted to that flow over the whole frame by re-weighted least
   squares (Cauchy weights, started from the median flow), so what moves on its own is
   down-weighted smoothly, never cut by an inlier threshold.
3. What moves on its own is the residual flow. The share of pixels that move, smoothed and damped
   towards the frame's edge, peaks at the mover; in a Gaussian window there, weighted by the
   residual, a least-squares similarity fit gives the mover's velocity and size rate. Its turn and
   texture size change are read from its own disc matched in the next frame (:func:`_turn`): flow
   sees a fast spin as a smear.
4. :func:`describe` summarises the series by measures free of direction, phase and position
   (straightness, reversals, the velocity's own turning, spin, size rates, travel, ...), and
   :class:`MotionClasses` turns them into probabilities of the motion analyzer's actions (a linear
   discriminant, ``motion_classes.json``, fitted by ``benchmarks/fit_motion_classes.py``). AM
   compares two videos by those probabilities, so a small change of the measures makes a small
   change of the score.

The constants below were chosen on the real-footage composite's fitting seeds 3, 8, 1, 4 and 7 (each
answered by a discriminant fitted on the other four) and the discriminant fitted on seeds 1, 3, 4, 7,
8 and 9 at CRF 20 and 30; held-out figures are in ``results/real_footage_composite.md``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import cv2
import numpy as np

from mvx_tasks.video_decoder import VideoClip

from ..fitted import FITTED_DIR
from ..fitted.linear_classes import LinearClasses
from ..shared.frame_memo import FRAME_MEMO
from ..shared.sampling import Window, grey_small, window_indices
from .flow import dense_flow

FIELD_FRAMES = 48  # sampled frames at most: 3 s at 10 fps is read whole (a shake at 3 Hz needs every frame)
FIELD_SIDE = 128  # the flow is read on a grey copy this wide (a 50-px cut-out of a 320-px clip is 20 px here)
GRID = 5  # the camera fit reads the flow every GRID pixels
CAUCHY_PX = 0.5  # Cauchy scale of the camera fit's residuals (small-frame pixels)
BORDER = 3  # pixels along the frame's edge left out (the flow is poor there)
#: the mover is where the most pixels move: the share of pixels whose residual flow exceeds about
#: MOVING_PX (a soft count, |r|^2 / (|r|^2 + MOVING_PX^2)), smoothed over ENERGY_SIGMA of the frame
#: width. Why a share, not the flow's energy: a small dark box of the footage's own, jumping across a
#: white wall, outweighed a large cut-out spinning in place (its rim moves, its centre barely)
MOVING_PX = 0.5
ENERGY_SIGMA = 0.06
WINDOW_SIGMA = 0.09  # the mover's own motion is averaged in a Gaussian window of this share of the width
RESIDUAL_FLOOR = 0.3  # pixels: residual flow below this carries little weight in the mover's fit
#: the residual energy is damped towards the frame's edge over this share of each side: an actor is in
#: the frame; what moves along its edge is mostly the scene's own (a globe's limb the camera fit does
#: not follow, content a pan brings in)
EDGE_RAMP = 0.15
TURN_SIDE = 320  # the turn is read at this resolution (a cut-out's texture, turned, needs its detail)
TURN_COARSE = 6.0  # degrees between the turns tried first per step ...
TURN_MAX = 42.0  # ... up to this turn (MVX-Synth's spins turn 15-26 degrees a frame at 10 fps) ...
TURN_FINE = 3.0  # ... then the two halfway turns around the best, then a parabola through the best three
TURN_SIZES = (0.88, 0.94, 1.06, 1.12)  # size changes tried per step at the best turn (a pulse grows ~10 % a frame)


@dataclass
class Field:
    """Per step between sampled frames k and k+1: its duration (s), the mover's centre (small-frame
    pixels, frame k), its own velocity (pixels/s, the camera removed), turn rate (rad/s,
    counter-clockwise on screen), size rate (d log size / dt) from the flow and from its texture, the
    residual weight around it, the spread of its moving pixels (pixels), the texture match of its
    turn and its centre in the first frame's coordinates (the camera removed); ``side``: the small
    frame's width."""

    dt: np.ndarray
    pos: np.ndarray
    vel: np.ndarray
    turn: np.ndarray
    grow: np.ndarray
    tex_grow: np.ndarray
    energy: np.ndarray
    spread: np.ndarray
    turn_match: np.ndarray
    scene: np.ndarray
    side: int


def camera_affine(flow: np.ndarray, iterations: int = 6) -> np.ndarray:
    """2x3 affine A with flow(x) ~ A [x, y, 1] - x, fitted to the flow every :data:`GRID` pixels by
    re-weighted least squares with Cauchy weights (scale :data:`CAUCHY_PX`) started from the median
    flow: a smooth function of the flow, so a little noise moves it a little."""
    h, w = flow.shape[:2]
    ys, xs = np.mgrid[BORDER:h - BORDER:GRID, BORDER:w - BORDER:GRID]
    x, y = xs.ravel().astype(np.float64), ys.ravel().astype(np.float64)
    f = flow[ys, xs].reshape(-1, 2).astype(np.float64)
    cx, cy = (w - 1) / 2, (h - 1) / 2
    design = np.stack([np.ones_like(x), x - cx, y - cy], 1)
    params = np.zeros((3, 2))
    params[0] = np.median(f, axis=0)
    for _ in range(iterations):
        r = f - design @ params
        wts = 1.0 / (1.0 + np.sum(r * r, 1) / CAUCHY_PX ** 2)
        dw = design * wts[:, None]
        params = np.linalg.solve(design.T @ dw + 1e-6 * np.eye(3), dw.T @ f)
    a = np.array([[1 + params[1, 0], params[2, 0], 0.0], [params[1, 1], 1 + params[2, 1], 0.0]])
    a[:, 2] = params[0] - params[1] * cx - params[2] * cy
    return a


def residual_flow(flow: np.ndarray, a: np.ndarray, xx: np.ndarray, yy: np.ndarray) -> np.ndarray:
    """The flow with the camera's affine motion ``a`` removed (``xx``, ``yy``: the pixel grid), zero within
    :data:`BORDER` pixels of the edge (the flow is poor there): what moves on its own."""
    res = flow.copy()
    res[..., 0] -= a[0, 0] * xx + a[0, 1] * yy + a[0, 2] - xx
    res[..., 1] -= a[1, 0] * xx + a[1, 1] * yy + a[1, 2] - yy
    res[:BORDER], res[-BORDER:], res[:, :BORDER], res[:, -BORDER:] = 0, 0, 0, 0
    return res


def edge_weight(w: int, h: int) -> np.ndarray:
    rx = np.clip(np.minimum(np.arange(w), w - 1 - np.arange(w)) / (EDGE_RAMP * w), 0, 1)
    ry = np.clip(np.minimum(np.arange(h), h - 1 - np.arange(h)) / (EDGE_RAMP * h), 0, 1)
    return np.outer(ry, rx)


def _local_fit(res: np.ndarray, centre: np.ndarray, sigma: float) -> tuple[np.ndarray, float, float, np.ndarray, float]:
    """Weighted least-squares similarity motion of the residual flow in a Gaussian window (``sigma``)
    around ``centre``, each pixel weighted by how much it moves (:data:`RESIDUAL_FLOOR`): (velocity in
    pixels per step, log-size change per step, total weight, the weighted centre of the moving pixels,
    their spread). Pixels within 3 sigma are read. The still background inside the window keeps some
    weight, so speeds read ~25 % low (the test's slide of 0.125 frame widths a second reads 0.091);
    every video is read alike. (Re-weighting by how well the mover's motion explains each pixel, tried
    on the 160-px flow, read a slide 6 % low instead of 22 % but named the fitting seeds 3 and 8's
    actions no better: 323 / 329 of 400 against 326 / 333 at CRF 20 / 30, the same action at both
    377 against 384.)"""
    h, w = res.shape[:2]
    r3 = int(np.ceil(3 * sigma))
    x0, x1 = max(0, int(centre[0]) - r3), min(w, int(centre[0]) + r3 + 1)
    y0, y1 = max(0, int(centre[1]) - r3), min(h, int(centre[1]) + r3 + 1)
    sub = res[y0:y1, x0:x1].astype(np.float64).reshape(-1, 2)
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float64)
    xs, ys = xs.ravel(), ys.ravel()
    mag2 = np.sum(sub * sub, -1)
    wts = np.exp(-((xs - centre[0]) ** 2 + (ys - centre[1]) ** 2) / (2 * sigma ** 2)) * mag2 / (mag2 + RESIDUAL_FLOOR ** 2)
    tot = float(wts.sum())
    if tot < 1e-6:
        return np.zeros(2), 0.0, 0.0, np.asarray(centre, np.float64), 0.0
    c = np.array([(wts * xs).sum(), (wts * ys).sum()]) / tot
    dx, dy = xs - c[0], ys - c[1]
    spread = float(np.sqrt((wts * (dx * dx + dy * dy)).sum() / tot))
    # u = tx + s dx - r dy, v = ty + s dy + r dx: the normal equations of the weighted fit
    zero, one = np.zeros_like(dx), np.ones_like(dx)
    cu, cv = np.stack([one, zero, dx, -dy]), np.stack([zero, one, dy, dx])
    m = (cu * wts) @ cu.T + (cv * wts) @ cv.T
    sol = np.linalg.solve(m + 1e-6 * np.eye(4), (cu * wts) @ sub[:, 0] + (cv * wts) @ sub[:, 1])
    return sol[:2], float(sol[2]), tot, c, spread


def _parabola(lo: float, mid: float, hi: float) -> float:
    """Offset (-0.5..0.5 grid steps) of the peak of the parabola through three equally spaced scores."""
    den = lo - 2 * mid + hi
    return float(np.clip(0.5 * (lo - hi) / den, -0.5, 0.5)) if den < 0 else 0.0


def _turn(g0: np.ndarray, g1: np.ndarray, c0: np.ndarray, c1: np.ndarray, radius: float) -> tuple[float, float, float]:
    """The turn (degrees, counter-clockwise on screen) and size change (log) of the disc of ``radius``
    around ``c0`` in ``g0`` that best match the disc around ``c1`` in ``g1``, and that match (normalised
    correlation): turns every :data:`TURN_COARSE` degrees up to :data:`TURN_MAX` at the same size, then
    the sizes :data:`TURN_SIZES` at the best turn, then the halfway turns at the best size; the turn and
    the size are refined by parabolas through the best and its neighbours (continuous estimates, not
    grid steps). Why the size: a pulse's texture matched at one size looks turned."""
    r = max(4, int(np.ceil(radius)))
    size = 2 * r + 1
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    disc = (xx * xx + yy * yy) <= r * r

    def patch(g: np.ndarray, c: np.ndarray, a: float, z: float) -> np.ndarray:
        mat = cv2.getRotationMatrix2D((float(c[0]), float(c[1])), a, z)
        mat[:, 2] += r - np.asarray(c, np.float64)
        p = cv2.warpAffine(g, mat, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        v = p.astype(np.float64)[disc]
        v -= v.mean()
        return v / (np.sqrt((v * v).sum()) + 1e-9)

    tgt = patch(g1, c1, 0.0, 1.0)
    scores: dict[tuple[float, float], float] = {}

    def score(a: float, z: float) -> float:
        if (a, z) not in scores:
            scores[(a, z)] = float(patch(g0, c0, a, z) @ tgt)
        return scores[(a, z)]

    best = float(max(np.arange(-TURN_MAX, TURN_MAX + 1e-9, TURN_COARSE), key=lambda a: score(float(a), 1.0)))
    zs = sorted(set(TURN_SIZES) | {1.0})
    j = max(range(len(zs)), key=lambda i: score(best, zs[i]))
    z = zs[j]
    zoff = _parabola(score(best, zs[j - 1]), scores[(best, z)], score(best, zs[j + 1])) if 0 < j < len(zs) - 1 else 0.0
    best = max((best - TURN_FINE, best, best + TURN_FINE), key=lambda a: score(a, z))
    off = _parabola(score(best - TURN_FINE, z), scores[(best, z)], score(best + TURN_FINE, z))
    step = (zs[j + 1] - zs[j - 1]) / 2 if 0 < j < len(zs) - 1 else 0.0
    # g0's disc sampled turned by a (cv2's angle) and enlarged by z matches g1's when the content turned
    # by -a and grew by z
    return -(best + off * TURN_FINE), float(np.log(z + zoff * step)), scores[(best, z)]


def field_grey(frame: np.ndarray) -> np.ndarray:
    return cv2.GaussianBlur(grey_small(frame, FIELD_SIDE), (3, 3), 0)


def _turn_grey(frame: np.ndarray) -> np.ndarray:
    return grey_small(frame, TURN_SIDE)


def motion_field(clip: VideoClip, window: Window = (None, None), max_frames: int = FIELD_FRAMES) -> Field | None:
    """The main mover's motion step by step (see the module docstring), memoised per clip and
    sampled frames; None with fewer than 4 sampled frames."""
    idx = window_indices(clip, window, max_frames)
    if len(idx) < 4:
        return None
    key = ("motion-field", tuple(int(i) for i in idx))
    return FRAME_MEMO.get(clip.frames, int(idx[0]), key, lambda _f: _compute(clip, idx))


def _compute(clip: VideoClip, idx: np.ndarray) -> Field:
    greys = [FRAME_MEMO.get(clip.frames, int(i), "field-grey", field_grey) for i in idx]
    sharp = [FRAME_MEMO.get(clip.frames, int(i), "field-turn", _turn_grey) for i in idx]
    h, w = greys[0].shape
    up = sharp[0].shape[1] / w
    times = clip.timestamps[idx]
    es, ws = ENERGY_SIGMA * w, WINDOW_SIGMA * w
    edge = edge_weight(w, h)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    steps = []
    prev = None
    to_first = np.eye(3)  # the camera's map from the first sampled frame to frame k
    for k in range(len(idx) - 1):
        fl = dense_flow(greys[k], greys[k + 1], levels=4)
        a = camera_affine(fl)
        res = residual_flow(fl, a, xx, yy)
        mag2 = np.sum(res * res, -1)
        e = cv2.GaussianBlur(mag2 / (mag2 + MOVING_PX ** 2), (0, 0), es) * edge
        if prev is not None:  # a mild prior towards where the mover was (not a gate)
            e *= 0.5 + np.exp(-((xx - prev[0]) ** 2 + (yy - prev[1]) ** 2) / (2 * (3 * ws) ** 2))
        py, px = np.unravel_index(int(np.argmax(e)), e.shape)
        _, _, _, c, _ = _local_fit(res, np.array([px, py], np.float64), ws)
        vel, grow, tot, c, spread = _local_fit(res, c, ws)
        # the mover's centre in the first frame's coordinates (the camera's maps chained): where it is in the scene
        scene = np.linalg.solve(to_first, np.array([c[0], c[1], 1.0]))
        steps.append((a, c, vel, grow, tot, spread, scene[:2] / scene[2]))
        to_first = np.vstack([a, [0, 0, 1]]) @ to_first
        prev = c
    rows = []
    for k, (a, c, vel, grow, tot, spread, scene) in enumerate(steps):
        # the turn: the disc around the mover against the disc around its centre in the next frame (where
        # the next step found it; the last step: where the camera and its velocity put it)
        c_next = steps[k + 1][1] if k + 1 < len(steps) else a[:, :2] @ c + a[:, 2] + vel
        turn, tex_grow, match = _turn(sharp[k], sharp[k + 1], c * up, c_next * up, up * max(1.2 * spread, 0.5 * ws))
        dt = max(float(times[k + 1] - times[k]), 1e-3)
        rows.append((dt, c, vel / dt, np.radians(turn) / dt, grow / dt, tex_grow / dt, tot, spread, match, scene))
    return Field(*(np.array([r[j] for r in rows]) for j in range(10)), side=w)


def _reversals(x: np.ndarray, floor: float) -> int:
    """Sign changes of ``x`` among its values larger than ``floor`` in size."""
    x = x[np.abs(x) > floor]
    return int(np.sum(np.sign(x[1:]) != np.sign(x[:-1]))) if len(x) > 1 else 0


def describe(f: Field) -> dict[str, float]:
    """Measures of the mover's motion free of its direction, phase and position (lengths in frame
    widths, rates per second): ``speed`` (rms), ``speed_var`` (its coefficient of variation: a bounce
    stops at the top, a zig-zag keeps its pace), ``drift`` (mean velocity over rms), ``straight`` (net
    travel over path length), ``extent`` (the path's span), ``aniso`` (the velocity's minor over major
    variance), ``vertical`` (|y| of its major axis), ``rev_along`` / ``rev_across`` (velocity reversals
    along and across that axis), ``vturn`` / ``vturn_consist`` (how fast the velocity's direction
    turns, and how steadily one way: an orbit), ``spin`` / ``spin_consist`` (|median| texture turn,
    degrees/s, and how steadily one way), ``grow_rms`` / ``grow_rev`` (size rate and its reversals: a
    pulse), ``tex_grow_rms`` (the size rate its texture tells), ``travel`` (the span of its centre in
    the scene: a slide travels, a spin or a pulse stays), ``match`` (median texture match of the turn)."""
    dur = float(f.dt.sum())
    v = f.vel / f.side
    speed = np.linalg.norm(v, axis=1)
    rms = float(np.sqrt(np.mean(speed ** 2))) + 1e-9
    path = np.vstack([np.zeros(2), np.cumsum(v * f.dt[:, None], 0)])
    lam, vecs = np.linalg.eigh(np.cov(v.T) + 1e-12 * np.eye(2))
    ang = np.arctan2(v[:, 1], v[:, 0])
    dang = np.angle(np.exp(1j * np.diff(ang)))
    strong = (speed[1:] > 0.3 * rms) & (speed[:-1] > 0.3 * rms)
    spin = np.degrees(f.turn)
    turning = np.abs(spin) > 10.0  # degrees/s: a turn the texture match tells from none
    grow_rms = float(np.sqrt(np.mean(f.grow ** 2)))
    return {
        "speed": rms,
        "speed_var": float(np.std(speed) / (np.mean(speed) + 1e-9)),
        "drift": float(np.linalg.norm(v.mean(0))) / rms,
        "straight": float(np.linalg.norm(path[-1])) / (float(np.sum(speed * f.dt)) + 1e-9),
        "extent": float(np.linalg.norm(np.ptp(path, axis=0))),
        "aniso": float(lam[0] / (lam[1] + 1e-12)),
        "vertical": float(abs(vecs[1, -1])),
        "rev_along": _reversals(v @ vecs[:, -1], 0.3 * rms) / dur,
        "rev_across": _reversals(v @ vecs[:, 0], 0.3 * rms) / dur,
        "vturn": abs(float(np.mean(dang[strong]))) / float(np.mean(f.dt)) if strong.any() else 0.0,
        "vturn_consist": float(abs(np.mean(np.sign(dang[strong])))) if strong.any() else 0.0,
        "spin": float(abs(np.median(spin))),
        "spin_consist": float(abs(np.mean(np.sign(spin[turning])))) if turning.any() else 0.0,
        "grow_rms": grow_rms,
        "tex_grow_rms": float(np.sqrt(np.mean(f.tex_grow ** 2))),
        "travel": float(np.linalg.norm(np.ptp(f.scene, axis=0))) / f.side,
        "grow_rev": _reversals(f.grow, 0.3 * grow_rms + 1e-9) / dur,
        "match": float(np.median(f.turn_match)),
    }


#: measures compared on a log scale (rates and sizes that span decades)
LOG_MEASURES = frozenset({"speed", "extent", "vturn", "spin", "grow_rms", "tex_grow_rms", "travel", "aniso"})
CLASSES_FILE = FITTED_DIR / "motion_classes.json"


@dataclass(frozen=True)
class MotionClasses(LinearClasses):
    """A linear discriminant over :func:`describe`'s measures (standardised; :data:`LOG_MEASURES` on a
    log scale): class scores ``W z + b``, probabilities by their softmax. Fitted by
    ``benchmarks/fit_motion_classes.py`` (Fisher's discriminant, :meth:`LinearClasses.fit`);
    ``fitted_on`` says on what."""

    log_measures: frozenset[str] = LOG_MEASURES
    EXAMPLE: ClassVar[str] = "video of the action"


@lru_cache(maxsize=1)
def motion_classes() -> MotionClasses:
    """The shipped discriminant (``fitted/motion_classes.json``)."""
    return MotionClasses.load(CLASSES_FILE)


#: below this typical share of moving pixels in the mover's window nothing moves on its own (the
#: action is "static", with no probabilities): a still textured clip re-encoded at CRF 30 reads 0.001,
#: the real-footage composite's AM videos at least 0.26 (seed 3 at CRF 30, 200 videos; seeds 25 and 26
#: at CRF 30 and MVX-Synth seed 0's AM, 300 videos: at least 0.33, so no figure recorded moved)
MIN_MOVING_SHARE = 0.02


def mover_action(clip: VideoClip, window: Window = (None, None), max_frames: int = FIELD_FRAMES) -> dict | None:
    """The main mover's action for the motion analyzer's data["mover"]: the likeliest action name,
    every action's probability, the lead of the likeliest, the measures behind them, the share of
    moving pixels and the frames read; "static" with no probabilities when nothing moves on its own
    (:data:`MIN_MOVING_SHARE`); None with fewer than 4 sampled frames."""
    f = motion_field(clip, window, max_frames)
    if f is None:
        return None
    measures = describe(f)
    # the typical share of moving pixels in the mover's window (1 = all of it)
    share = float(np.median(f.energy)) / (2 * np.pi * (WINDOW_SIGMA * f.side) ** 2)
    out = {"moving_share": round(share, 4), "measures": {k: round(v, 4) for k, v in measures.items()},
           "frames_used": int(len(f.dt) + 1), "source": "motion field"}
    if share < MIN_MOVING_SHARE:  # nothing moves on its own: no action, not a guess among the seven
        return {"action": "static", "action_probs": {}, "lead": 0.0, **out}
    probs = motion_classes().probabilities(measures)
    top = sorted(probs.items(), key=lambda kv: -kv[1])
    return {"action": top[0][0], "action_probs": {k: round(v, 4) for k, v in probs.items()},
            "lead": round(top[0][1] - top[1][1], 4), **out}
