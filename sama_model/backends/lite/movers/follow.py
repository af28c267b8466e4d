"""How many objects move on their own, counted by following each candidate's own appearance.

Why: :mod:`.movers.count`'s regions come from a median background model, and their count moved with a
re-encoding in about 18 % of the real-footage composite's videos. Its losses were two touching cut-outs
read as one region and a slow cut-out the median holds for most of the clip (``benchmarks/count_misses.py``).
A pasted photograph, a person or a car looks the same from frame to frame, so once a region shows it
in one frame, its look can be followed through the others by normalised cross-correlation, whether the
background model sees it there or not, and two touching objects keep their own paths.

1. Candidates (:func:`followed`): every region track of the count's foreground floors (those that read
   the regions, :data:`.movers.count.COUNT_FLOORS`) is seeded at three of its frames (its regions of the
   quartile areas); the middle of each region's box (:data:`SHRINK`) is the template (a flat-coloured
   region's whole box and a rim, :data:`OUTLINE`), followed forward and back through the sampled frames
   (:func:`follow`) while it matches (:data:`MIN_MATCH`).
2. Each followed path is measured (:data:`MEASURES`): how far it travels in the scene, how well and how
   long it matches, how much of it lies on the foreground, how many other candidates run along it, ...
3. A fitted tree ensemble (``follow_classes.json``, :class:`.fitted.tree_classes.TreeClasses`) gives each
   candidate the probability that it is an object moving on its own; the most probable are kept, one
   per object (:func:`heads`: a candidate whose scene path runs within :data:`SAME_OBJECT` of its size of
   a kept one is the same object), and the count is those at :data:`COUNT_PROBABILITY` or more.

The ensemble is fitted by ``benchmarks/fit_follow_classes.py`` on the real-footage composite's fitting
seeds, each candidate labelled by the generator's truth (read by that script only, never here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np

from mvx_tasks.video_decoder import VideoClip

from ..fitted import FITTED_DIR
from ..fitted.tree_classes import TreeClasses
from ..shared.frame_memo import FRAME_MEMO
from .camera import _small
from .regions import Movers

CLASSES_FILE = FITTED_DIR / "follow_classes.json"

#: a template is the middle SHRINK of its region's box (the box's corners are the background's)
SHRINK = 0.7
#: a template is followed while its best normalised cross-correlation in the search window is at least this
MIN_MATCH = 0.5
#: pixels (small frame) searched around the predicted position, each side
SEARCH = 14
#: a template flatter than this (grey levels, standard deviation over its pixels) is not followed: it matches anywhere
MIN_CONTRAST = 3.0
#: pixels of surroundings around a flat-coloured region's box that its template takes in (see :func:`followed`)
OUTLINE = 3
#: a candidate is kept when followed through at least this share of the sampled frames
MIN_FOLLOWED = 0.5
#: two candidates are one object when their scene paths' median distance over their common frames is under this
#: many of the larger one's sizes (real-footage composite fitting seeds 1, 3, 4, 7, 8, 9 at CRF 20 and 30, each seed
#: counted by an ensemble fitted on the others, counts exact of 1200 / moved by CRF 30 of 600 at the count's
#: probability: 0.8 1056 / 78, 1.0 1070 / 60, 1.2 1022 / 78)
SAME_OBJECT = 1.0
#: a candidate's "support": the others that run within SUPPORT_NEAR of its size of it over half its frames
SUPPORT_NEAR = 0.3
#: a kept candidate counts at this probability or more (the same fitting seeds, each counted by an ensemble fitted on
#: the others: counts exact / moved, CNT answers right of 240 / changed of 120: 0.5 - / -, 223 / 12; 0.6 1070 / 60,
#: 225 / 8; 0.7 1061 / 57, 224 / 9; 0.8 1044 / 56, 223 / 8; 0.9 1008 / 49)
COUNT_PROBABILITY = 0.6
#: the measures the ensemble reads, in the order the fitting script writes them
MEASURES = ("foreground", "foreground_own", "travel", "match", "match_low", "match_min", "log_size", "followed",
            "floor", "log_support", "contrast", "edge", "track_share", "camera")


@dataclass
class Candidate:
    """One followed template: the sampled steps it matched in, its centre there (small-frame pixels) and in the
    middle frame's coordinates (camera removed), its size (small-frame pixels) and its measures."""

    steps: np.ndarray
    image: np.ndarray
    scene: np.ndarray
    size: float
    measures: dict[str, float] = field(default_factory=dict)
    probability: float = 0.0
    template: np.ndarray | None = field(default=None, repr=False)  # the followed pixels (RGB, small frame)


def follow(frames: list[np.ndarray], start: int, template: np.ndarray, centre: tuple[float, float]
           ) -> tuple[list[int], list[np.ndarray], list[float]]:
    """A template's centre in each sampled frame, forward and back from ``start``, while it matches: the
    steps (ascending), the centres and the match scores (1.0 at ``start``). The search window is centred on
    the position the last step's velocity (smoothed) predicts."""
    th, tw = template.shape[:2]
    h, w = frames[0].shape[:2]
    found = {start: (np.asarray(centre, np.float64), 1.0)}
    for d in (1, -1):
        pos, vel, k = np.asarray(centre, np.float64), np.zeros(2), start
        while 0 <= k + d < len(frames):
            k += d
            pred = pos + vel
            x0, y0 = int(round(pred[0] - tw / 2 - SEARCH)), int(round(pred[1] - th / 2 - SEARCH))
            xa, ya = max(0, x0), max(0, y0)
            xb, yb = min(w, x0 + tw + 2 * SEARCH), min(h, y0 + th + 2 * SEARCH)
            if xb - xa < tw + 2 or yb - ya < th + 2:
                break
            res = cv2.matchTemplate(frames[k][ya:yb, xa:xb], template, cv2.TM_CCOEFF_NORMED)
            _, best, _, loc = cv2.minMaxLoc(res)
            if best < MIN_MATCH:
                break
            new = np.array([xa + loc[0] + tw / 2, ya + loc[1] + th / 2])
            vel = 0.5 * vel + 0.5 * (new - pos)
            pos = new
            found[k] = (pos, float(best))
    steps = sorted(found)
    return steps, [found[k][0] for k in steps], [found[k][1] for k in steps]


def _on_mask(masks: list[np.ndarray], steps: list[int], image: np.ndarray, radius: int) -> float:
    """Share of a window of ``radius`` around each centre that is foreground, averaged over the steps."""
    out = []
    for k, (x, y) in zip(steps, np.rint(image).astype(int)):
        win = masks[k][max(0, y - radius):y + radius + 1, max(0, x - radius):x + radius + 1]
        out.append(float((win > 0).mean()) if win.size else 0.0)
    return float(np.mean(out)) if out else 0.0


def _seeds(n_segments: int, areas: list[float]) -> list[int]:
    """A track's segments seeded: those of its quartile areas (the middle one alone for a short track)."""
    order = np.argsort(areas, kind="stable")
    return sorted({int(order[min(n_segments - 1, int(q * n_segments))]) for q in (0.25, 0.5, 0.75)})


def followed(clip: VideoClip, reads: dict[float, Movers]) -> list[Candidate]:
    """Every candidate of the floors' region tracks, followed and measured (see the module's steps 1 and 2).
    ``reads`` maps each foreground floor to its background model's result (the same sampled frames)."""
    floors = sorted(reads)
    m = reads[floors[0]]
    n = len(m.idx)
    if n < 3:
        return []
    frames = [FRAME_MEMO.get(clip.frames, int(i), "mover-small", _small).astype(np.float32) for i in m.idx]
    h, w = frames[0].shape[:2]
    centre = np.array([[[w / 2, h / 2]]], np.float64)
    camera = float(np.median([np.linalg.norm(cv2.perspectiveTransform(centre, mp).reshape(2) - centre.reshape(2))
                              for mp in m.maps]))
    out: list[Candidate] = []
    for floor in floors:
        mm = reads[floor]
        for t in mm.tracks:
            if len(t.steps) < 2:
                continue
            for j in _seeds(len(t.segments), [s.area for s in t.segments]):
                seg, k = t.segments[j], t.steps[j]
                x0, y0, x1, y1 = (v * mm.scale for v in seg.box)
                tw, th = max(5, int(round((x1 - x0) * SHRINK))), max(5, int(round((y1 - y0) * SHRINK)))
                a, b = int(round((x0 + x1) / 2 - tw / 2)), int(round((y0 + y1) / 2 - th / 2))
                if a < 0 or b < 0 or a + tw > w or b + th > h:
                    continue
                template = frames[k][b:b + th, a:a + tw]
                contrast = float(template.std())
                size = float(np.sqrt(tw * th)) / SHRINK
                if contrast < MIN_CONTRAST:
                    # a flat-coloured object (a painted shape): its middle matches anywhere, so its whole box and
                    # an OUTLINE-pixel rim of what surrounds it are followed (its outline is its look)
                    a, b = int(np.floor(x0)) - OUTLINE, int(np.floor(y0)) - OUTLINE
                    tw, th = int(np.ceil(x1)) + OUTLINE - a, int(np.ceil(y1)) + OUTLINE - b
                    if a < 0 or b < 0 or a + tw > w or b + th > h:
                        continue
                    template = frames[k][b:b + th, a:a + tw]
                    contrast = float(template.std())
                    size = float(np.sqrt((tw - 2 * OUTLINE) * (th - 2 * OUTLINE)))
                    if contrast < MIN_CONTRAST:
                        continue
                steps, image, match = follow(frames, k, template, (a + tw / 2, b + th / 2))
                image = np.array(image)
                scene = np.array([cv2.perspectiveTransform(p.reshape(1, 1, 2), m.maps[q]).reshape(2)
                                  for p, q in zip(image, steps)])
                later = np.array(match[1:] or [1.0])
                radius = max(1, int(min(tw, th) * 0.3))
                near_edge = (image[:, 0] < tw) | (image[:, 0] > w - tw) | (image[:, 1] < th) | (image[:, 1] > h - th)
                out.append(Candidate(np.array(steps), image, scene, size, {
                    "foreground": _on_mask(m.masks, steps, image, radius),
                    "foreground_own": _on_mask(mm.masks, steps, image, radius),
                    "travel": min(float(np.linalg.norm(np.ptp(scene, axis=0))) / size, 5.0),
                    "match": float(np.mean(match)), "match_low": float(np.quantile(later, 0.1)),
                    "match_min": float(later.min()), "log_size": float(np.log(size)), "followed": len(steps) / n,
                    "floor": floor / 10, "contrast": contrast, "edge": float(np.mean(near_edge)),
                    "track_share": len(t.steps) / n, "camera": camera}, template=template))
    _support(out, n)
    return out


def _paths(cands: list[Candidate], n: int) -> np.ndarray:
    p = np.full((len(cands), n, 2), np.nan)
    for i, c in enumerate(cands):
        p[i, c.steps] = c.scene
    return p


def _distances(cands: list[Candidate], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Median scene distance of every two candidates over their common steps [N, N], and those steps' number."""
    p = _paths(cands, n)
    d = np.linalg.norm(p[:, None] - p[None], axis=-1)
    common = np.sum(~np.isnan(d), axis=-1)
    d = np.where(np.isnan(d), np.inf, d)
    d.sort(axis=-1)
    # the median of each pair's finite distances (the infinite ones, steps not shared, sort last)
    lo, hi = np.maximum(common - 1, 0) // 2, common // 2
    med = 0.5 * (np.take_along_axis(d, lo[..., None], -1)[..., 0] + np.take_along_axis(d, hi[..., None], -1)[..., 0])
    return np.where(common > 0, med, np.inf), common


def _support(cands: list[Candidate], n: int) -> None:
    if not cands:
        return
    med, common = _distances(cands, n)
    length = np.array([len(c.steps) for c in cands])
    size = np.array([c.size for c in cands])
    near = (common >= 0.5 * length[:, None]) & (med < SUPPORT_NEAR * size[:, None])
    np.fill_diagonal(near, False)
    for c, k in zip(cands, near.sum(1)):
        c.measures["log_support"] = float(np.log1p(k))


@lru_cache(maxsize=1)
def follow_classes() -> TreeClasses:
    """The shipped ensemble (:data:`CLASSES_FILE`)."""
    return TreeClasses.load(CLASSES_FILE)


def heads(cands: list[Candidate], n: int, classes: TreeClasses | None = None) -> list[Candidate]:
    """One candidate per object, most probable first: each candidate followed through :data:`MIN_FOLLOWED` of
    the frames, in order of probability, unless it runs within :data:`SAME_OBJECT` of a kept one."""
    if not cands:
        return []
    probs = (classes or follow_classes()).probabilities([c.measures for c in cands])
    for c, p in zip(cands, probs):
        c.probability = float(p)
    med, common = _distances(cands, n)
    order = sorted((i for i, c in enumerate(cands) if len(c.steps) >= MIN_FOLLOWED * n),
                   key=lambda i: (-cands[i].probability, i))
    kept: list[int] = []
    for i in order:
        if not any(common[i, j] >= 3 and med[i, j] < SAME_OBJECT * max(cands[i].size, cands[j].size) for j in kept):
            kept.append(i)
    return [cands[i] for i in kept]
