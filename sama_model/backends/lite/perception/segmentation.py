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

from dataclasses import dataclass, field

import cv2
import numpy as np

from .colours import dominant_colors
from ..shared.frame_memo import FRAME_MEMO, fast_median, resize_max
from .shapes import _central_hole, classify_shape


@dataclass
class Segment:
    """One object in one frame (box, centroid and area in the *input* frame's pixels)."""

    box: tuple[float, float, float, float]
    centroid: tuple[float, float]
    area: float
    color: str
    shape: str
    rgb: tuple[int, int, int]
    circularity: float
    solidity: float
    vertices: int
    aspect: float
    contrast: float = 0.0  # median Lab distance of the object's pixels from the background
    contour: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 2), np.float32))
    hole: float = 0.0  # area share of a central hole (a ring's), which the shape namer reads

    @property
    def label(self) -> str:
        return self.shape

    def size_name(self, frame_area: float) -> str:
        frac = self.area / max(frame_area, 1.0)
        return "small" if frac < 0.01 else ("large" if frac > 0.06 else "medium")

    def to_dict(self, frame_area: float) -> dict:
        return {
            "label": self.shape,
            "color": self.color,
            "box": [round(v, 1) for v in self.box],
            "centroid": [round(v, 1) for v in self.centroid],
            "area": round(self.area, 1),
            "attributes": {
                "color": self.color,
                "size": self.size_name(frame_area),
                "rgb": list(self.rgb),
                "circularity": round(self.circularity, 3),
                "solidity": round(self.solidity, 3),
                "vertices": self.vertices,
            },
        }


_ONES = np.ones((1, 3), np.float32)
# structuring elements, made once (the per-object steps below use them a few thousand times on a
# real-footage clip's 24 frames; OpenCV only reads them)
_K2, _K3, _K5, _K7 = (np.ones((n, n), np.uint8) for n in (2, 3, 5, 7))
_CROSS3 = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))
_ELLIPSE7 = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7))


def _count(mask: np.ndarray) -> int:
    """``mask.sum()`` of a 0/1 uint8 or a bool mask (its non-zero pixels; cv2 counts them in a
    fraction of numpy's reduction's per-call cost, which dominates on object crops)."""
    return cv2.countNonZero(mask if mask.dtype == np.uint8 else mask.view(np.uint8))


def _lab_table() -> np.ndarray:
    """[1, 256, 3] float32 Lab of each 8-bit code per channel: L x 100/255, a - 128, b - 128."""
    code = np.arange(256, dtype=np.float32)
    lum = code.copy()
    lum *= 100.0 / 255.0
    return np.ascontiguousarray(np.stack([lum, code - 128.0, code - 128.0], axis=-1)[None])


_LAB_TABLE = _lab_table()


def _channel_sum(img: np.ndarray) -> np.ndarray:
    """Sum over the 3 channels of a float32 image (cv2.transform is much faster than numpy here)."""
    return cv2.transform(np.ascontiguousarray(img, np.float32), _ONES)


def _lab_dist(lab: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per-pixel Euclidean Lab distance to an image or a single colour."""
    return cv2.sqrt(_lab_dist2(lab, ref))


def _lab_dist2(lab: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """:func:`_lab_dist` squared (the nearer of two colours is the smaller of these, and IEEE square
    roots keep order: the square root of the minimum is the minimum of the square roots)."""
    diff = lab - np.asarray(ref, np.float32)
    return _channel_sum(diff * diff)


def _edge_sharpness(lab: np.ndarray, mask: np.ndarray) -> float:
    """Median over the outline of the strongest local colour step (Lab units per pixel).

    A sharp (in-focus, anti-aliased) edge changes colour within a pixel or two, so this is a
    large share of the object's contrast; a blurred background shape spreads it over many.
    """
    gx = cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3) / 8.0
    gy = cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3) / 8.0
    mag = cv2.sqrt(_channel_sum(gx * gx + gy * gy))
    edge = cv2.dilate(mask, _K3) & ~cv2.erode(mask, _K3) & 1
    if _count(edge) < 4:
        return 0.0
    return float(fast_median(cv2.dilate(mag, _K3)[edge > 0])) * 2.0


def _trim_rim(lab: np.ndarray, raw: np.ndarray, filled: np.ndarray) -> np.ndarray:
    """Drop outline pixels whose colour is nearer the surrounding background than the object.

    Rare-colour regions include the anti-aliased/blurred rim (mixed colours are rare too); the
    object ends where a pixel is closer to the background than to the object's own colours
    (its darker and lighter halves, so stripes and shading both count as the object).
    """
    core = cv2.erode(filled, _K3) & raw
    ring = (cv2.dilate(filled, _K5) > 0) & ~(filled > 0)
    if _count(core) < 6 or _count(ring) < 6:
        return raw
    pix = lab[core > 0]
    lum = pix[:, 0]
    mid = fast_median(lum)
    reps = [fast_median(pix[lum <= mid]), fast_median(pix[lum >= mid])]
    d_obj = cv2.sqrt(np.minimum(_lab_dist2(lab, reps[0]), _lab_dist2(lab, reps[1])))
    d_bg = _lab_dist(lab, fast_median(lab[ring]))
    rim = (raw > 0) & ~(core > 0)
    out = raw.copy()
    out[rim & (d_bg < d_obj)] = 0
    return out


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


def colour_centres(x: np.ndarray, clusters: int = 16, sample: int = 3000) -> np.ndarray:
    """k-means centres of the (N, 3) float32 colours ``x``, at most ``clusters``, fitted on an evenly
    spaced sample of ``sample`` pixels with a fixed seed (deterministic: a frame always gets the
    same quantisation)."""
    step = max(1, len(x) // sample)
    sub = np.ascontiguousarray(x[step // 2 :: step][:sample])
    cv2.setRNGSeed(12345)
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_MAX_ITER, 8, 0.5)
    _, _, centres = cv2.kmeans(sub, int(min(clusters, len(sub))), None, crit, 1, cv2.KMEANS_PP_CENTERS)
    return centres


class _AnnulusCounts:
    """Per label ``j``: how many pixels of label ``j`` lie in the ``outer`` box around each pixel but
    outside its ``inner`` box (both odd, centred; image borders reflected as ``BORDER_REFLECT``).

    Why: these counts are :func:`colour_rarity`'s largest cost (two box filters per cluster, ~100 us
    of ~150 us a cluster at 224 x 168). The labels are padded (reflected) once; per label, one
    integral image of the padded 0/1 mask gives both boxes as differences of its rows and columns,
    ~60 us. Counts are whole numbers below 2^24, exact in float32 whatever the order of the sums,
    so the result is the box filters' bit for bit (the plain path stays for images smaller than the
    outer box's reach, where reflections repeat, and for sums too large for float32).
    """

    def __init__(self, labels: np.ndarray, inner: int, outer: int) -> None:
        h, w = labels.shape
        self.labels, self.inner, self.outer = labels, inner, outer
        big, small = outer // 2, inner // 2
        self.fast = big < min(h, w) and (h + 2 * big + 1) * (w + 2 * big + 1) < 1 << 24
        if self.fast:
            self.padded = cv2.copyMakeBorder(labels, big, big, big, big, cv2.BORDER_REFLECT)
            self.mask = np.empty(self.padded.shape, np.uint8)
            # rows/columns of the integral image bounding each box: outer [0, 2 big + 1), inner [a, b)
            self.o, self.a, self.b = 2 * big + 1, big - small, big + small + 1
            self.v_out = np.empty((h, self.padded.shape[1] + 1), np.float32)
            self.v_in = np.empty_like(self.v_out)
            self.out = np.empty((h, w), np.float32)
            self.tmp = np.empty((h, w), np.float32)
        else:
            self.mask = np.empty((h, w), np.uint8)  # 0/1 bytes: the box sums read a quarter of the memory
            # whole numbers below 2^16 when the outer box is: exact as 16-bit sums, cheaper than float32
            self.depth = cv2.CV_16U if outer * outer < 1 << 16 else cv2.CV_32F

    def __call__(self, j: int) -> np.ndarray:
        """Annulus counts of label ``j`` ((h, w) float32, or the box filters' uint16); the returned
        array is reused by the next call. (Never negative: the inner box lies inside the outer.)"""
        if not self.fast:
            np.equal(self.labels, j, out=self.mask.view(bool))
            box = cv2.boxFilter(self.mask, self.depth, (self.outer, self.outer), normalize=False,
                                borderType=cv2.BORDER_REFLECT)
            small = cv2.boxFilter(self.mask, self.depth, (self.inner, self.inner), normalize=False,
                                  borderType=cv2.BORDER_REFLECT)
            return cv2.subtract(box, small, dst=box)
        h, w = self.out.shape
        o, a, b = self.o, self.a, self.b
        np.equal(self.padded, j, out=self.mask.view(bool))
        integ = cv2.integral(self.mask, sdepth=cv2.CV_32F)
        # box sums down the columns (whole rows of the integral image), then across
        cv2.subtract(integ[o : o + h], integ[:h], dst=self.v_out)
        cv2.subtract(integ[b : b + h], integ[a : a + h], dst=self.v_in)
        # (outer right - inner right) - (outer left - inner left): outer box minus inner box
        cv2.subtract(self.v_out[:, o : o + w], self.v_in[:, b : b + w], dst=self.out)
        cv2.subtract(self.v_out[:, :w], self.v_in[:, a : a + w], dst=self.tmp)
        return cv2.subtract(self.out, self.tmp, dst=self.out)


def colour_rarity(
    lab: np.ndarray, clusters: int = 16, inner: int = 31, outer: int = 91, sigma: float = 9.0, sample: int = 3000
) -> np.ndarray:
    """How common each pixel's colour is around it: the (soft) share of pixels of a similar
    colour in an annulus around the pixel, or in the whole frame if that is lower.

    Why: a background, however textured (stripes, tiles, noise, a horizon), repeats its colours
    all around any point of it, while an object's colours are absent from its surroundings.
    Colours are quantised by k-means (fitted on a fixed pixel sample, so deterministic); a pixel's
    share sums each cluster's local fraction weighted by a Gaussian of the colour distance, so a
    smooth colour ramp (a wide stripe) counts as one recurring colour. The annulus skips the
    centre ``inner`` window, so an object's own pixels hardly count against it.
    """
    h, w = lab.shape[:2]
    x = lab.reshape(-1, 3)
    n = len(x)
    centres = colour_centres(x, clusters, sample)
    k = len(centres)
    # Squared colour distance to each centre, one contiguous row per cluster, channel by channel
    # into preallocated rows ((dL^2 + da^2) + db^2 in float32, the same sums as a per-pixel dot
    # product): a third of the time of broadcasting (N, 3) - centre per cluster. Each row is used
    # while it is in cache: the nearest-centre update, then turned into its Gaussian weight in place.
    chans = [np.ascontiguousarray(x[:, c]) for c in range(3)]
    d2 = np.empty((k, n), np.float32)
    tmp = np.empty(n, np.float32)
    # nearest centre, the first on ties (argmin over the cluster axis, which strides badly): the
    # clusters come in increasing index, so a strictly closer cluster's index is larger than every
    # label so far and max(label, j * closer) writes it (two plain byte passes, no masked copy)
    lbl = np.zeros(n, np.uint8)  # (k <= 16: bytes make the per-cluster comparisons below cheap)
    best = np.empty(n, np.float32)
    closer = np.empty(n, np.uint8)
    scale = np.float32(-0.5 / sigma**2)
    for j in range(k):
        row = d2[j]
        np.subtract(chans[0], centres[j, 0], out=row)
        np.multiply(row, row, out=row)
        for c in (1, 2):
            np.subtract(chans[c], centres[j, c], out=tmp)
            np.multiply(tmp, tmp, out=tmp)
            np.add(row, tmp, out=row)
        if j == 0:
            best[:] = row
        else:
            np.less(row, best, out=closer.view(bool))
            np.multiply(closer, np.uint8(j), out=closer)
            np.maximum(lbl, closer, out=lbl)
            np.minimum(best, row, out=best)
        np.multiply(row, scale, out=row)  # d2 is not needed any more: its Gaussian weight in place
        np.exp(row, out=row)
    weight = d2
    counts = np.bincount(lbl, minlength=k)
    ring = np.zeros((h, w), np.float32)
    glob = np.zeros(n, np.float32)
    part = np.empty((h, w), np.float32)
    inner, outer = min(inner, h, w) | 1, min(outer, 2 * max(h, w) + 1) | 1
    norm = float(outer * outer - inner * inner)
    annulus = _AnnulusCounts(lbl.reshape(h, w), inner, outer)
    for j in range(k):
        if counts[j] == 0:
            continue
        frac = float(np.float32(counts[j]) / np.float32(n))  # the cluster's share, as a float32 mean
        np.multiply(weight[j].reshape(h, w), annulus(j), out=part)
        np.divide(part, norm, out=part)
        ring += part
        np.multiply(weight[j], np.float32(frac), out=tmp)
        glob += tmp
    return np.minimum(ring, glob.reshape(h, w))


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
        return cv2.LUT(cv2.cvtColor(rgb, cv2.COLOR_RGB2LAB), _LAB_TABLE)

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
        inner = (cv2.erode(mask, _K3) > 0) & ~(cv2.erode(mask, _K7) > 0)
        if _count(inner) < 4:
            inner = mask > 0
        outer = (cv2.dilate(mask, _K7) > 0) & ~(cv2.dilate(mask, _K3) > 0)
        if _count(outer) < 4:  # object fills its crop: nothing around it to compare with
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
        cross, k3 = _CROSS3, _K3
        seed = cv2.morphologyEx((share < self.rare_seed).astype(np.uint8), cv2.MORPH_OPEN, k3)
        # growth stays near the seeds: a large, moderately rare background region (a big blob)
        # must not join the objects lying on it into one oversized component
        near = cv2.dilate(seed, _ELLIPSE7)
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
            raw = _trim_rim(crop, raw, mask)
            cnts, _ = cv2.findContours(raw, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
            if not cnts:
                continue
            cnt = max(cnts, key=cv2.contourArea)
            mask = np.zeros_like(raw)
            cv2.drawContours(mask, [cnt], -1, 1, thickness=-1)
            hole = _central_hole(mask, raw)
            area = float(_count(mask))
            if area < min_area:
                continue
            ring = (cv2.dilate(mask, _K7) > 0) & ~(cv2.dilate(mask, k3) > 0)
            body = (mask & raw) > 0
            inside = fast_median(crop[body])
            contrast = float(np.linalg.norm(inside - fast_median(crop[ring]))) if _count(ring) >= 4 else 99.0
            if contrast < self.rare_contrast or _edge_sharpness(crop, mask) < self.rare_sharpness * contrast:
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
        flat = _channel_sum(np.maximum(sq - mean * mean, 0)) < self.flat_std**2
        # two background scales: the fine one follows gradients, the coarse one sees large objects
        dist = np.maximum(_lab_dist(lab, self.background(lab, 24)), _lab_dist(lab, self.background(lab, 10)))
        found, union = self._extract(small, lab, flat, dist, scale, share=share)
        if any(seg.area * scale * scale > 0.012 * h * w for seg in found):  # Segment.area's units
            bg = self.masked_background(lab, cv2.dilate(union, _K5))
            dist = _lab_dist(lab, bg)
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
        flat = _channel_sum(np.maximum(sq - mean * mean, 0)) < (1.5 * self.flat_std) ** 2
        dist = np.maximum(_lab_dist(lab, self.background(lab, 24)), _lab_dist(lab, self.background(lab, 10)))
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
        seed = cv2.morphologyEx(seed, cv2.MORPH_OPEN, _K2)
        if taken is not None:
            seed[cv2.dilate(taken, _K5) > 0] = 0
        else:
            taken = np.zeros((h, w), np.uint8)
        union = np.zeros((h, w), np.uint8)
        _n, lbl, stats, _ = cv2.connectedComponentsWithStats(seed, connectivity=8)
        frame_area = float(h * w)
        min_area = max(6.0, self.min_area_frac * frame_area)
        out: list[_Candidate] = []
        areas = stats[1:, cv2.CC_STAT_AREA]
        order = [k + 1 for k in np.argsort(-areas, kind="stable") if areas[k] >= min_area * 0.3]
        k3, k5 = _K3, _K5
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
            d_obj = _lab_dist(crop, colour)
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
            area = float(_count(mask))
            if area < min_area or area > self.max_area_frac * frame_area:
                continue
            if not self._contrasts(crop, mask):
                continue
            core = cv2.erode(mask & raw, _K5)  # the object's own pixels, not a ring's hole
            if _count(core) >= 4 and float(np.linalg.norm(crop[core > 0].std(axis=0))) > self.interior_std:
                continue  # a patch of texture, not a flat-coloured object
            taken[y0:y1, x0:x1] |= mask
            if share is not None and float(fast_median(share[y0:y1, x0:x1][mask > 0])) >= self.rare_grow:
                continue  # flat, but its colour recurs around it: a tile or a stripe of the background
            union[y0:y1, x0:x1] |= mask
            contrast = float(fast_median(dist[y0:y1, x0:x1][(mask & raw) > 0]))
            body = (mask > 0) & (raw > 0) & (dist[y0:y1, x0:x1] > 0.5 * self.fg_delta)
            pix = small[y0:y1, x0:x1][body if _count(body) >= 4 else mask > 0]
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


def box_iou(a: tuple[float, ...] | list[float], b: tuple[float, ...] | list[float]) -> float:
    """Intersection over union of two ``[x1, y1, x2, y2]`` boxes."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else 0.0


def segment_indices(
    frames: np.ndarray, indices: np.ndarray | list[int], segmenter: Segmenter | None = None
) -> list[list[Segment]]:
    """Segments of ``frames[i]`` for each index (cached across tools and calls)."""
    seg = segmenter or _DEFAULT
    return [FRAME_MEMO.get(frames, int(i), ("segments", seg.key), seg.segment) for i in indices]
