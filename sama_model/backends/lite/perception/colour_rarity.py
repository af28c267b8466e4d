"""How rare each pixel's colour is around it: the segmenter's cue for objects on textured backgrounds."""

from __future__ import annotations

import cv2
import numpy as np


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
