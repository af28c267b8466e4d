"""Video forensics: evidence that part of a clip was edited after recording.

Three classical cues, each reported separately and folded into one ``score`` in [0, 1]:

* ``camera_misfit``: a region that persistently disagrees with the global camera model. For
  frame pairs (t, t+k) a homography is fitted to tracked corners (RANSAC, so moving objects and
  edits are outliers), frame t is warped onto t+k and the local residual is box-filtered. Moving
  objects leave residual at changing places, so the per-pixel *median over time* is kept; a
  spliced-in region (own motion), a frozen region or a screen-pinned overlay keeps a residual
  at a fixed screen position. Reported as the 99.5th percentile of that persistent map over its
  median (so lighting/noise level cancel).
* ``pinned``: regions that stay still on screen while the camera model predicts they should
  change (compensated residual exceeds the raw frame difference): frozen patches, overlays.
* ``copy_move``: duplicated content inside a frame (block matching). Textured blocks are matched
  against the rest of the frame (away from themselves); near-exact matches vote for their
  offset, and the most common offset's votes per frame is the evidence (a cloned region votes
  many times with one offset; natural repetition is rarely pixel-exact).

Each cue is also reported on its own logistic curve (``cues``). The overall ``score`` is one
logistic fit over single videos of MVX-Synth FD (seed 13, 120 videos, half manipulated) on
log(1 + pinned) and log(1 + copy-move votes), or the copy-move cue alone when it is higher: a
clone votes for one offset many times per frame (authentic busy scenes reached 7.5 votes at
most in 100 pairs, so that cue's curve is centred at 8). Comparing two videos by the score picks
the manipulated one in 80 % of those 60 pairs and 80 % of 40 other pairs (seed 5), against
61.7 % and 65 % for the previous "strongest cue" rule. ``camera_misfit`` is left out of the score: it ranked
the manipulated video first in only 47 % of the pairs (busy scenes misfit the camera model
everywhere) and only locates the edit (``region_xywh``). The cues themselves are generic (no
assumption about where or what the edit is).
"""

from __future__ import annotations

from collections import Counter

import cv2
import numpy as np

from mvx_tasks.video_decoder import VideoClip

from .shared.frame_memo import FRAME_MEMO
from .shared.sampling import Window

MAX_SIDE = 256  # analysis resolution (cost of block matching grows with the square of it)


def _grey(frame: np.ndarray) -> np.ndarray:
    h, w = frame.shape[:2]
    if max(h, w) > MAX_SIDE:
        f = MAX_SIDE / max(h, w)
        frame = cv2.resize(frame, (int(round(w * f)), int(round(h * f))), interpolation=cv2.INTER_AREA)
    g = cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY) if frame.ndim == 3 else frame
    return cv2.GaussianBlur(g.astype(np.float32), (3, 3), 0)


def _homography(g0: np.ndarray, g1: np.ndarray) -> np.ndarray:
    u0, u1 = g0.clip(0, 255).astype(np.uint8), g1.clip(0, 255).astype(np.uint8)
    p0 = cv2.goodFeaturesToTrack(u0, 300, 0.01, 6)
    if p0 is None or len(p0) < 8:
        return np.eye(3)
    p1, st, _ = cv2.calcOpticalFlowPyrLK(u0, u1, p0, None, winSize=(15, 15), maxLevel=3)
    ok = st.ravel() == 1
    if ok.sum() < 8:
        return np.eye(3)
    H, _ = cv2.findHomography(p0[ok], p1[ok], cv2.RANSAC, 1.5)
    return H if H is not None else np.eye(3)


def camera_residuals(greys: list[np.ndarray], step: int = 3, box: int = 11) -> tuple[np.ndarray, np.ndarray]:
    """Box-filtered |I_{t+step} - warp(I_t)| (camera-compensated) and |I_{t+step} - I_t| (raw),
    [pairs, H, W], NaN where the warp leaves the frame; global gain change compensated."""
    h, w = greys[0].shape
    comp, raw = [], []
    kernel = np.ones((box, box), np.uint8)
    for t in range(len(greys) - step):
        a, b = greys[t], greys[t + step]
        H = _homography(a, b)
        warped = cv2.warpPerspective(a, H, (w, h), borderMode=cv2.BORDER_REPLICATE)
        valid = cv2.warpPerspective(np.ones_like(a), H, (w, h)) > 0.99
        if valid.mean() < 0.3:
            continue
        gain = float(b[valid].mean() / max(warped[valid].mean(), 1.0))
        inside = cv2.erode(valid.astype(np.uint8), kernel) > 0
        comp.append(np.where(inside, cv2.blur(np.abs(b - warped * gain), (box, box)), np.nan))
        raw.append(np.where(inside, cv2.blur(np.abs(b - a * gain), (box, box)), np.nan))
    if not comp:
        z = np.full((1, h, w), np.nan, np.float32)
        return z, z
    return np.asarray(comp), np.asarray(raw)


def _nanmedian_t(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nan_to_num(np.nanmedian(x, axis=0), nan=0.0)


def copy_move(greys: list[np.ndarray], block: int = 12, stride: int = 8, exclude: int = 12,
              min_std: float = 6.0) -> tuple[float, list[int] | None]:
    """Near-exact duplicate blocks per frame voting for one offset: (votes per frame, [dy, dx])."""
    votes: Counter = Counter()
    for g in greys:
        h, w = g.shape
        for y in range(0, h - block + 1, stride):
            for x in range(0, w - block + 1, stride):
                b = g[y:y + block, x:x + block]
                sd = float(b.std())
                if sd < min_std:
                    continue
                r = cv2.matchTemplate(g, b, cv2.TM_SQDIFF)
                r[max(0, y - exclude + 1):y + exclude, max(0, x - exclude + 1):x + exclude] = np.inf
                best, _, (bx, by), _ = cv2.minMaxLoc(r)
                mad = float(np.sqrt(max(best, 0.0) / b.size))
                if mad < 0.35 * sd and mad < 4.0:
                    votes[(2 * round((by - y) / 2), 2 * round((bx - x) / 2))] += 1
    if not votes:
        return 0.0, None
    (dy, dx), n = votes.most_common(1)[0]
    return n / max(len(greys), 1), [int(dy), int(dx)]


#: logistic weights on (log1p pinned, log1p copy-move votes per frame) and the bias, fitted on single
#: videos of MVX-Synth FD (seed 13, default difficulty, 120 videos, half manipulated; see the module doc)
SCORE_WEIGHTS = (1.85, 0.662, -2.725)


def _sig(x: float, centre: float, width: float) -> float:
    return float(1.0 / (1.0 + np.exp(-(x - centre) / width)))


def manipulation_evidence(frames: np.ndarray, max_frames: int = 24, step: int = 3) -> dict:
    """Forensic evidence of a local edit in ``frames`` [T, H, W, 3] (uint8). Returns
    ``{"score": 0..1, "cues": {cue: 0..1}, "raw": {...}, "region_xywh": [...] | None, "copy_offset": ...}``;
    the region is where the persistent camera misfit peaks (a hint, not a segmentation)."""
    T = len(frames)
    if T < step + 2:
        return {"score": 0.0, "cues": {}, "raw": {}, "region_xywh": None, "copy_offset": None,
                "note": "too few frames"}
    idx = np.unique(np.linspace(0, T - 1, min(T, max_frames)).astype(int))
    greys = [_grey(frames[i]) for i in idx]
    comp, raw = camera_residuals(greys[len(greys) // 4:], step=step)
    persist = _nanmedian_t(comp)
    base = float(np.median(persist[persist > 0])) if (persist > 0).any() else 1.0
    misfit = float(np.percentile(persist, 99.5) / (base + 1.0))
    pin_map = _nanmedian_t(comp - raw)
    pinned = float(np.percentile(pin_map, 99.5) / (float(np.median(np.abs(pin_map))) + 1.0))
    later = [greys[i] for i in np.linspace(len(greys) // 3, len(greys) - 1, 4).astype(int)]
    cm, offset = copy_move(later)
    cues = {"camera_misfit": _sig(misfit, 8.0, 1.6), "pinned": _sig(pinned, 3.0, 0.6), "copy_move": _sig(cm, 8.0, 1.5)}
    y, x = np.unravel_index(int(np.argmax(persist)), persist.shape)
    f = frames.shape[2] / greys[0].shape[1]  # back to the decoded frame's pixels
    z = SCORE_WEIGHTS[0] * np.log1p(max(pinned, 0.0)) + SCORE_WEIGHTS[1] * np.log1p(max(cm, 0.0)) + SCORE_WEIGHTS[2]
    return {
        "score": round(max(float(1.0 / (1.0 + np.exp(-z))), cues["copy_move"]), 4),
        "cues": {k: round(v, 4) for k, v in cues.items()},
        "raw": {"camera_misfit": round(misfit, 3), "pinned": round(pinned, 3), "copy_move_votes": round(cm, 3)},
        "region_xywh": [int((x - 8) * f), int((y - 8) * f), int(16 * f), int(16 * f)] if misfit > 1.0 else None,
        "copy_offset": [int(v * f) for v in offset] if offset else None,
    }


class LiteManipulationDetector:
    """The ``manipulation_detector`` tool's offline backend: :func:`manipulation_evidence` over
    every decoded frame of the window, memoised per clip and window (pixels only, no weights)."""

    def detect(self, clip: VideoClip, window: Window = (None, None)) -> dict:
        full = clip.window(*(window if window is not None else (None, None)))
        return FRAME_MEMO.get(clip.frames, int(full[0]) if len(full) else 0, ("forensics", int(len(full))),
                              lambda _: manipulation_evidence(clip.frames[full]))
