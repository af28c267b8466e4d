"""Foreground objects of one frame: flat, colour-distinct regions against a local background.

Why this design: MVX-Synth (and many cartoons) show flat-coloured objects over plain, gradient
or textured backgrounds, often under camera motion, so a temporal background model is unsafe.
Per frame we estimate the large-scale background with a coarse median, keep pixels that are
locally flat *and* far (in Lab) from that background, fill each component's outline (large
objects whose centre was absorbed by the median come back whole), then re-grow the mask by
colour similarity so anti-aliased edges are included. Each object gets a colour name from a
small HSV palette (:mod:`.perception.colours`) and a shape name from circularity / polygon vertices /
solidity (:mod:`.perception.shapes`).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from ..shared.frame_memo import FRAME_MEMO
from ..shared.order_stats import fast_median
from ..shared.sampling import resize_max
from .colour_rarity import colour_rarity
from .colours import dominant_colors
from .lab_pixels import (CROSS3, ELLIPSE7, K2, K3, K5, K7, LAB_TABLE, channel_sum, edge_sharpness, lab_dist,
                         pixel_count, trim_rim)
from .segment import Segment, box_iou
from .shapes import _central_hole, classify_shape


def _merge_detections(rare: list["Segment"], flat: list["Segment"]) -> list["Segment"]:
    """Rare-colour detections, completed by flat-colour ones.

    A flat object the rare pass missed is added; one that overlaps rare detections replaces
    them when it is much larger (the rare pass saw only a sliver of a big object) or when two or
    more flat objects share one rare detection (touching objects the rare pass merged).
    """
    out = list(rare)
    for f in flat:
        hits = [r for r in out if _overlaps(f, r) or _overlaps(r, f)]
        if not hits:
            out.append(f)
        elif f.area > 1.8 * max(r.area for r in hits):
            out = [r for r in out if all(r is not h for h in hits)] + [f]
        elif len(hits) == 1 and hits[0].area > 1.5 * f.area and f.solidity >= 0.85:
            # a rare region much larger than a clean flat object: the object touching another
            out = [r for r in out if r is not hits[0]] + [f]
    for r in list(out):
        inside = [f for f in flat if f is not r and _overlaps(f, r) and f.area < 0.8 * r.area]
        if len(inside) >= 2 and any(r is o for o in out):
            out = [o for o in out if o is not r] + [f for f in inside if all(f is not o for o in out)]
    # a flat object whose overlapping rare region was replaced above now stands alone
    out += [f for f in flat if all(f is not o and not (_overlaps(f, o) or _overlaps(o, f)) for o in out)]
    return out


def _overlaps(a: "Segment", b: "Segment") -> bool:
    """Whether two detections are the same object (boxes overlap well, or one holds the other's centre)."""
    inside = b.box[0] <= a.centroid[0] <= b.box[2] and b.box[1] <= a.centroid[1] <= b.box[3]
    return inside or box_iou(a.box, b.box) > 0.3


class Segmenter:
    """Per-frame object segmentation with fixed, documented thresholds (deterministic).

    Options: ``work_side`` (processing resolution), ``min_area_frac``/``max_area_frac`` (object
    size limits as fractions of the frame), ``fg_delta`` (Lab distance from background),
    ``flat_std`` (local Lab std below which a pixel is "flat"), ``grow_delta`` (colour distance
    for re-growing), ``ring_delta`` (colour step across the outline), ``interior_std`` (Lab std
    inside an object above which it is background texture), ``textured`` (experimental, off:
    a second pass on a smoothed image for striped/checkered/noisy objects that are flat only on
    average), ``max_objects``.
    """

    def __init__(
        self,
        work_side: int = 224,
        min_area_frac: float = 0.0012,
        max_area_frac: float = 0.35,
        fg_delta: float = 18.0,
        flat_std: float = 7.0,
        grow_delta: float = 16.0,
        ring_delta: float = 14.0,
        interior_std: float = 6.0,
        textured: bool = False,
        max_objects: int = 40,
        method: str = "both",
        rare_seed: float = 0.05,
        rare_grow: float = 0.14,
        rare_contrast: float = 15.0,
        rare_sharpness: float = 0.4,
    ) -> None:
        self.work_side = int(work_side)
        self.min_area_frac = float(min_area_frac)
        self.max_area_frac = float(max_area_frac)
        self.fg_delta = float(fg_delta)
        self.flat_std = float(flat_std)
        self.grow_delta = float(grow_delta)
        self.ring_delta = float(ring_delta)
        self.interior_std = float(interior_std)
        self.textured = bool(textured)
        self.max_objects = int(max_objects)
        if method not in ("rarity", "flat", "both"):
            raise ValueError(f"method must be 'rarity', 'flat' or 'both', not {method!r}")
        self.method = str(method)
        self.rare_seed = float(rare_seed)
        self.rare_grow = float(rare_grow)
        self.rare_contrast = float(rare_contrast)
        self.rare_sharpness = float(rare_sharpness)
        self.key = (
            self.rare_contrast,
            self.rare_sharpness,
            self.method,
            self.rare_seed,
            self.rare_grow,
            self.work_side,
            self.min_area_frac,
            self.max_area_frac,
            self.fg_delta,
            self.flat_std,
            self.grow_delta,
            self.ring_delta,
            self.interior_std,
            self.textured,
            self.max_objects,
        )

    @staticmethod
    def _lab(rgb: np.ndarray) -> np.ndarray:
        """CIE Lab as float32 (L 0-100, a/b signed) via OpenCV's fast 8-bit conversion.

        The 8-bit codes go through a per-channel look-up table (L x 100/255, a/b - 128: the same
        float32 values as converting the array and scaling its channels, which cost more than the
        colour conversion itself).
        """
        return cv2.LUT(cv2.cvtColor(rgb, cv2.COLOR_RGB2LAB), LAB_TABLE)

    @staticmethod
    def background(lab: np.ndarray, grid: int = 24) -> np.ndarray:
        """Large-scale background colour: a 5x5 median over a ``grid``-cell coarse image (Lab)."""
        h, w = lab.shape[:2]
        cs = float(grid) / max(h, w)
        cw, ch = max(4, int(round(w * cs))), max(4, int(round(h * cs)))
        coarse = cv2.resize(lab, (cw, ch), interpolation=cv2.INTER_AREA)
        u8 = np.empty_like(coarse, dtype=np.uint8)
        u8[..., 0] = np.clip(coarse[..., 0] * 2.55, 0, 255)
        u8[..., 1:] = np.clip(coarse[..., 1:] + 128, 0, 255)
        med = cv2.medianBlur(u8, 5).astype(np.float32)
        med[..., 0] /= 2.55
        med[..., 1:] -= 128
        return cv2.resize(med, (w, h), interpolation=cv2.INTER_LINEAR)

    def _contrasts(self, lab: np.ndarray, mask: np.ndarray) -> bool:
        """Whether the colour just inside the outline differs from the colour just outside it
        (rejects patches of a smoothly varying background, whose colour continues across)."""
        inner = (cv2.erode(mask, K3) > 0) & ~(cv2.erode(mask, K7) > 0)
        if pixel_count(inner) < 4:
            inner = mask > 0
        outer = (cv2.dilate(mask, K7) > 0) & ~(cv2.dilate(mask, K3) > 0)
        if pixel_count(outer) < 4:  # object fills its crop: nothing around it to compare with
            return True
        return float(np.linalg.norm(fast_median(lab[inner]) - fast_median(lab[outer]))) >= self.ring_delta

    @staticmethod
    def masked_background(lab: np.ndarray, objects: np.ndarray, grid: int = 16) -> np.ndarray:
        """Background with found objects masked out (normalised averaging, holes inpainted)."""
        h, w = lab.shape[:2]
        cs = float(grid) / max(h, w)
        cw, ch = max(4, int(round(w * cs))), max(4, int(round(h * cs)))
        valid = (objects == 0).astype(np.float32)
        num = cv2.resize(lab * valid[..., None], (cw, ch), interpolation=cv2.INTER_AREA)
        den = cv2.resize(valid, (cw, ch), interpolation=cv2.INTER_AREA)
        coarse = num / np.maximum(den, 1e-6)[..., None]
        u8 = np.empty((ch, cw, 3), np.uint8)
        u8[..., 0] = np.clip(coarse[..., 0] * 2.55, 0, 255)
        u8[..., 1:] = np.clip(coarse[..., 1:] + 128, 0, 255)
        holes = (den < 0.25).astype(np.uint8)
        if holes.any() and not holes.all():
            u8 = cv2.inpaint(u8, holes, 3, cv2.INPAINT_TELEA)
        med = cv2.medianBlur(u8, 3).astype(np.float32)
        med[..., 0] /= 2.55
        med[..., 1:] -= 128
        return cv2.resize(med, (w, h), interpolation=cv2.INTER_LINEAR)

    def segment(self, frame: np.ndarray) -> list[Segment]:
        """Objects of one RGB uint8 frame, largest first (by the configured ``method``)."""
        if self.method == "flat":
            return self.segment_flat(frame)
        small, scale = resize_max(frame, self.work_side)
        rare, share = self._rare(small, scale)
        if self.method != "both":
            return sorted(_named(rare), key=lambda sg: -sg.area)[: self.max_objects]
        # flat objects keep their precise outlines, but only where their colour is rare around
        # them (a band of a striped backdrop or a floor tile is flat yet recurs): the rarity map
        # goes into the flat pass, which keeps such a patch out of its objects
        flat = self._flat_candidates(frame, (small, scale), share)
        named = _named(rare + flat)  # both passes' objects named in one colour vote
        found = _merge_detections(named[: len(rare)], named[len(rare) :])
        found.sort(key=lambda sg: -sg.area)
        return found[: self.max_objects]

    def _rare(self, small: np.ndarray, scale: float) -> tuple[list[_Candidate], np.ndarray]:
        """Objects as connected regions of locally rare colour (see :func:`colour_rarity`), not yet
        named (:func:`_named`), and the rarity map.

        Hysteresis: regions of clearly rare colour (``rare_seed``) grow into less rare pixels
        (``rare_grow``), so an object whose dark stripes resemble the background stays whole;
        a 3x3 opening first removes thin lines (edges of tiles, scratches, anti-aliased rims).
        Works on textured objects (stripes, checks, dots, shading) because it compares colour
        sets, not flatness.
        """
        h, w = small.shape[:2]
        lab = self._lab(cv2.GaussianBlur(small, (0, 0), 0.7))
        share = colour_rarity(lab)
        cross, k3 = CROSS3, K3
        seed = cv2.morphologyEx((share < self.rare_seed).astype(np.uint8), cv2.MORPH_OPEN, k3)
        # growth stays near the seeds: a large, moderately rare background region (a big blob)
        # must not join the objects lying on it into one oversized component
        near = cv2.dilate(seed, ELLIPSE7)
        grow = ((share < self.rare_grow).astype(np.uint8) & near) | seed
        n, lbl, stats, _ = cv2.connectedComponentsWithStats(grow, connectivity=8)
        seeded = np.bincount(lbl[seed > 0].ravel(), minlength=n)
        frame_area = float(h * w)
        min_area = max(6.0, self.min_area_frac * frame_area)
        out: list[_Candidate] = []
        order = [k for k in np.argsort(-stats[:, cv2.CC_STAT_AREA], kind="stable") if k > 0 and seeded[k] >= 4]
        for k in order:
            x, y, bw, bh = (int(v) for v in stats[k, :4])
            area0 = float(stats[k, cv2.CC_STAT_AREA])
            if area0 < min_area or area0 > self.max_area_frac * frame_area:
                continue
            pad = 6
            x0, y0, x1, y1 = max(0, x - pad), max(0, y - pad), min(w, x + bw + pad), min(h, y + bh + pad)
            raw = (lbl[y0:y1, x0:x1] == k).astype(np.uint8)
            # thin attachments (a scratch touching the object) go; a 1-px rim of the core stays
            raw &= cv2.dilate(cv2.morphologyEx(raw, cv2.MORPH_OPEN, k3), cross)
            cnts, _ = cv2.findContours(raw, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
            if not cnts:
                continue
            cnt = max(cnts, key=cv2.contourArea)
            mask = np.zeros_like(raw)
            cv2.drawContours(mask, [cnt], -1, 1, thickness=-1)
            crop = lab[y0:y1, x0:x1]
            raw = trim_rim(crop, raw, mask)
            cnts, _ = cv2.findContours(raw, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
            if not cnts:
                continue
            cnt = max(cnts, key=cv2.contourArea)
            mask = np.zeros_like(raw)
            cv2.drawContours(mask, [cnt], -1, 1, thickness=-1)
            hole = _central_hole(mask, raw)
            area = float(pixel_count(mask))
            if area < min_area:
                continue
            ring = (cv2.dilate(mask, K7) > 0) & ~(cv2.dilate(mask, k3) > 0)
            body = (mask & raw) > 0
            inside = fast_median(crop[body])
            contrast = float(np.linalg.norm(inside - fast_median(crop[ring]))) if pixel_count(ring) >= 4 else 99.0
            if contrast < self.rare_contrast or edge_sharpness(crop, mask) < self.rare_sharpness * contrast:
                continue  # a faint mark, or a soft-edged (defocused) background shape
            out.append(_Candidate(cnt, mask, x0, y0, scale, area, hole, contrast, small[y0:y1, x0:x1][body]))
            if len(out) >= self.max_objects:
                break
        return out, share

    def segment_flat(self, frame: np.ndarray) -> list[Segment]:
        """Flat-coloured objects of one RGB uint8 frame, largest first (the original method).

        A second pass with objects masked out of the background runs only when a large object
        was found (the coarse median partly absorbs those and distorts the background near them).
        """
        return _named(self._flat_candidates(frame))

    def _flat_candidates(
        self, frame: np.ndarray, resized: tuple[np.ndarray, float] | None = None, share: np.ndarray | None = None
    ) -> list[_Candidate]:
        """:meth:`segment_flat`'s objects before they are named (see :class:`_Candidate`);
        ``resized``: ``resize_max(frame, self.work_side)`` when the caller has it already;
        ``share``: the rarity map (:func:`colour_rarity`) of that frame, when flat patches whose
        colour recurs around them are background, not objects (see :meth:`_extract`)."""
        small, scale = resize_max(frame, self.work_side) if resized is None else resized
        h, w = small.shape[:2]
        lab = self._lab(cv2.GaussianBlur(small, (3, 3), 0))
        mean = cv2.blur(lab, (5, 5))
        sq = cv2.blur(lab * lab, (5, 5))
        flat = channel_sum(np.maximum(sq - mean * mean, 0)) < self.flat_std**2
        # two background scales: the fine one follows gradients, the coarse one sees large objects
        dist = np.maximum(lab_dist(lab, self.background(lab, 24)), lab_dist(lab, self.background(lab, 10)))
        found, union = self._extract(small, lab, flat, dist, scale, share=share)
        if any(seg.area * scale * scale > 0.012 * h * w for seg in found):  # Segment.area's units
            bg = self.masked_background(lab, cv2.dilate(union, K5))
            dist = lab_dist(lab, bg)
            found, union = self._extract(small, lab, flat, dist, scale, share=share)
        # an object must differ from the background as a whole, not only at a seed spot
        found = [seg for seg in found if seg.contrast >= self.fg_delta]
        if self.textured:
            found += self._textured(small, scale, union)
        return found[: self.max_objects]

    def _textured(self, small: np.ndarray, scale: float, taken: np.ndarray) -> list[_Candidate]:
        """Striped/checkered/noisy objects: flat and distinct only once fine texture is averaged
        out (median then mean filter); searched outside the objects already found."""
        soft = cv2.blur(cv2.medianBlur(small, 5), (3, 3))
        lab = self._lab(soft)
        mean = cv2.blur(lab, (5, 5))
        sq = cv2.blur(lab * lab, (5, 5))
        flat = channel_sum(np.maximum(sq - mean * mean, 0)) < (1.5 * self.flat_std) ** 2
        dist = np.maximum(lab_dist(lab, self.background(lab, 24)), lab_dist(lab, self.background(lab, 10)))
        found, _ = self._extract(small, lab, flat, dist, scale, taken=taken.copy())
        return [seg for seg in found if seg.contrast >= self.fg_delta]

    def _extract(
        self,
        small: np.ndarray,
        lab: np.ndarray,
        flat: np.ndarray,
        dist: np.ndarray,
        scale: float,
        taken: np.ndarray | None = None,
        share: np.ndarray | None = None,
    ) -> tuple[list[_Candidate], np.ndarray]:
        """Objects seeded by flat pixels far from the background, outside ``taken`` (patches
        already found); returns them (not yet named) and their union mask.

        With the rarity map ``share``, a flat patch whose colour recurs around it (median share
        at least ``rare_grow``) is background: it still holds its seeds (``taken``, updated in
        place, so they are not grown again), but it is not an object, so it neither enters the
        union that the masked background leaves out nor triggers that second pass. Why: on
        textured footage such patches are a few dozen a frame, and masking them out of the
        background distorted it near the real objects and doubled the pass's cost.
        """
        h, w = small.shape[:2]
        seed = ((dist > self.fg_delta) & flat).astype(np.uint8)
        seed = cv2.morphologyEx(seed, cv2.MORPH_OPEN, K2)
        if taken is not None:
            seed[cv2.dilate(taken, K5) > 0] = 0
        else:
            taken = np.zeros((h, w), np.uint8)
        union = np.zeros((h, w), np.uint8)
        _n, lbl, stats, _ = cv2.connectedComponentsWithStats(seed, connectivity=8)
        frame_area = float(h * w)
        min_area = max(6.0, self.min_area_frac * frame_area)
        out: list[_Candidate] = []
        areas = stats[1:, cv2.CC_STAT_AREA]
        order = [k + 1 for k in np.argsort(-areas, kind="stable") if areas[k] >= min_area * 0.3]
        k3, k5 = K3, K5
        for k in order:
            x, y, bw, bh = (int(v) for v in stats[k, :4])
            pad = max(8, int(0.5 * max(bw, bh)))
            x0, y0, x1, y1 = max(0, x - pad), max(0, y - pad), min(w, x + bw + pad), min(h, y + bh + pad)
            comp = lbl[y0:y1, x0:x1] == k  # the seed component (bool)
            if taken[y0:y1, x0:x1][comp].mean() > 0.5:
                continue
            crop = lab[y0:y1, x0:x1]
            colour = fast_median(crop[comp])
            # re-grow through flat pixels of the same colour, then into pixels closer to the
            # object's colour than to the background's (the 50% point of an anti-aliased edge);
            # the outline is filled afterwards, and a background hole at its centre makes a ring
            d_obj = lab_dist(crop, colour)
            same = (((d_obj < self.grow_delta) & flat[y0:y1, x0:x1]) | comp).astype(np.uint8)
            n_same, same_lbl = cv2.connectedComponents(same, connectivity=8)
            keep = np.zeros(n_same, bool)  # the components holding the seed (a lookup, not np.isin)
            keep[same_lbl[comp]] = True
            keep[0] = False
            grown = keep[same_lbl]
            edge = (
                (cv2.dilate(grown.astype(np.uint8), k5) > 0)
                & (d_obj < dist[y0:y1, x0:x1])
                & (d_obj < 3 * self.grow_delta)
            )
            raw = cv2.morphologyEx((grown | edge).astype(np.uint8), cv2.MORPH_CLOSE, k3)
            cnts, _ = cv2.findContours(raw, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
            if not cnts:
                continue
            cnt = max(cnts, key=cv2.contourArea)
            mask = np.zeros_like(raw)
            cv2.drawContours(mask, [cnt], -1, 1, thickness=-1)
            hole = _central_hole(mask, raw)
            area = float(pixel_count(mask))
            if area < min_area or area > self.max_area_frac * frame_area:
                continue
            if not self._contrasts(crop, mask):
                continue
            core = cv2.erode(mask & raw, K5)  # the object's own pixels, not a ring's hole
            if pixel_count(core) >= 4 and float(np.linalg.norm(crop[core > 0].std(axis=0))) > self.interior_std:
                continue  # a patch of texture, not a flat-coloured object
            taken[y0:y1, x0:x1] |= mask
            if share is not None and float(fast_median(share[y0:y1, x0:x1][mask > 0])) >= self.rare_grow:
                continue  # flat, but its colour recurs around it: a tile or a stripe of the background
            union[y0:y1, x0:x1] |= mask
            contrast = float(fast_median(dist[y0:y1, x0:x1][(mask & raw) > 0]))
            body = (mask > 0) & (raw > 0) & (dist[y0:y1, x0:x1] > 0.5 * self.fg_delta)
            pix = small[y0:y1, x0:x1][body if pixel_count(body) >= 4 else mask > 0]
            out.append(_Candidate(cnt, mask, x0, y0, scale, area, hole, contrast, pix))
            if len(out) >= self.max_objects:
                break
        return out, union


@dataclass
class _Candidate:
    """A flat-colour object found but not yet named (colour vote, shape fit).

    Why: many flat candidates are dropped afterwards (a first pass redone with objects masked out
    of the background, a contrast floor); naming costs more than finding, so only the kept ones
    are named.
    """

    cnt: np.ndarray
    mask: np.ndarray
    x0: int
    y0: int
    scale: float
    area_px: float  # in the downscaled frame's pixels
    hole: float
    contrast: float
    pix: np.ndarray  # the object's RGB pixels that its colour is voted from
    _named: Segment | None = None

    @property
    def area(self) -> float:
        """Area in the input frame's pixels (as :attr:`Segment.area`)."""
        return self.area_px / self.scale**2

    @property
    def contour(self) -> np.ndarray:
        """Outline in the input frame's pixels (as :attr:`Segment.contour`)."""
        return (self.cnt.reshape(-1, 2).astype(np.float32) + np.array([self.x0, self.y0], np.float32)) / self.scale

    def named(self) -> Segment:
        return _named([self])[0]

    def _name(self, name: str, rgb: tuple[int, int, int]) -> Segment:
        self._named = _segment(self.cnt, self.mask, self.x0, self.y0, self.scale, self.area_px, self.hole,
                               name, rgb, self.contrast)
        return self._named


def _named(cands: list[_Candidate]) -> list[Segment]:
    """The candidates as :class:`Segment` objects, named (colour vote, shape fit) once each; the
    colour votes of all of them in one :func:`dominant_colors` call (a few per frame: per-call costs)."""
    todo = [c for c in cands if c._named is None]
    for c, (name, rgb) in zip(todo, dominant_colors([c.pix for c in todo])):
        c._name(name, rgb)
    return [c._named for c in cands]


def _segment(cnt: np.ndarray, mask: np.ndarray, x0: int, y0: int, scale: float, area: float, hole: float,
             name: str, rgb: tuple, contrast: float) -> Segment:
    """A :class:`Segment` from one object's contour and mask in a crop at ``(x0, y0)`` of a frame
    downscaled by ``scale`` (both segmentation passes build their objects the same way)."""
    shape, circ, sol, nv, aspect = classify_shape(cnt, hole)
    pts = (cnt.reshape(-1, 2).astype(np.float32) + np.array([x0, y0], np.float32)) / scale
    bx, by, bw2, bh2 = cv2.boundingRect(cnt)
    m = cv2.moments(mask, binaryImage=True)
    cx = (x0 + m["m10"] / m["m00"]) / scale
    cy = (y0 + m["m01"] / m["m00"]) / scale
    box = ((x0 + bx) / scale, (y0 + by) / scale, (x0 + bx + bw2) / scale, (y0 + by + bh2) / scale)
    return Segment(box=box, centroid=(cx, cy), area=area / scale**2, color=name, shape=shape, rgb=rgb,
                   circularity=circ, solidity=sol, vertices=nv, aspect=aspect, contrast=contrast, contour=pts,
                   hole=float(hole))


_DEFAULT = Segmenter()


def segment_frame(frame: np.ndarray, segmenter: Segmenter | None = None) -> list[Segment]:
    """Objects of one frame with the default (or given) segmenter."""
    return (segmenter or _DEFAULT).segment(frame)


def segment_indices(
    frames: np.ndarray, indices: np.ndarray | list[int], segmenter: Segmenter | None = None
) -> list[list[Segment]]:
    """Segments of ``frames[i]`` for each index (cached across tools and calls)."""
    seg = segmenter or _DEFAULT
    return [FRAME_MEMO.get(frames, int(i), ("segments", seg.key), seg.segment) for i in indices]
