"""The main mover's look, read once from all its frames: followed by its appearance, aligned, median-stacked, cut.

Why: re-identification under a moving camera (:mod:`.identity.compare`) cut the subject out of each of 12 frames on its own
(a flow box, then GrabCut), so one codec's noise could move a box, drop a dark part or cut a stray piece, and a
verdict read from those cuts flipped with a re-encoding in about 10 % of the real-footage composite's held-out pairs.
A pasted photograph, a person or a car looks the same from frame to frame, so:

1. **Follow** (:func:`subject_stack`): the most probable object of the count's followed candidates
   (:func:`.movers.count.count_candidates`, :func:`.movers.follow.heads`, shared with the count and memoised per clip)
   gives the subject's centre in each sampled frame it was followed through.
2. **Stack**: a square window around that centre in every such frame (:data:`WINDOW_SIZES` of its size, at least
   :data:`WINDOW_FRAME` of the frame; its size at least its extent in the aligned foreground,
   :func:`foreground_extent`) is one aligned stack. Its per-pixel median is the subject's look with the
   codec's noise and the passing background voted out; its per-pixel spread (:func:`_spread`) is low where pixels
   move with the subject and high on the background that slides past it.
3. **Cut** (:func:`_cut`): one GrabCut on the median image: the subject's square (and those of objects followed
   rigidly with it, :func:`_partners`) probably the subject, the window's rim and pixels that spread more than
   :data:`SPREAD_BACKGROUND` surely background; the component at the centre.
4. **View** (:func:`stack_view`): the cut's box resized to VIEW x VIEW (CIELAB and coverage), as one descriptor row.
5. **Compare** (:func:`stack_texture`, :func:`stack_score`): the two views' texture correlation, best over small
   shifts, mapped to a same-subject probability (:data:`STACK_WEIGHTS`).

Measured with ``benchmarks/identity_stability.py`` (the tool's own path) on the real-footage composite (RID pairs at
CRF 20 and 30; right at each CRF, verdicts flipped): fitting seeds 1, 3, 4, 7, 8, 9 (240 pairs, where the two weights
were fitted) 224 / 215, 11 -> 232 / 230, 4; held-out seeds 95, 96, 97 (120 pairs) 109 / 105, 6 -> 112 / 111, 3.
Limits: MVX-Synth's flat figures seen from another viewpoint and light do not keep their texture (its RID read this
way: 53 of 100, chance), so :mod:`.identity.compare` uses this score only where a camera clearly moves
(:data:`.identity.compare.STACK_MOVING_PX`; MVX-Synth's default cameras never do), and reads a clip's stack only for such
a pair (:func:`.identity.compare.stack_reads`). Following the count's candidates is most of the cost: a stack of a 3-s 224-px
clip costs about 0.35 s CPU (``real_footage_tools.py``: an identity read of the still slate 0.17 s before the stack,
0.50 s when every clip read one, 0.16 s now that two still cameras read none). The
follower can take another mover for the subject (a turning globe's rim), and GrabCut can drop a dark part of the
subject on a dark backdrop: the flips left.
"""

from __future__ import annotations

import cv2
import numpy as np

from mvx_tasks.video_decoder import VideoClip

from ..movers.count import COUNT_FLOORS, count_candidates, count_reads
from ..movers.follow import Candidate, heads
from ..shared.order_stats import median_u8, order_stats
from ..shared.sampling import Window
from .texture import texture_correlations

#: the window's half side in the subject's sizes (a followed template's size is often a part of the subject, so the
#: window is wide) and, at least, this share of the frame's shorter side
WINDOW_SIZES = 1.75
WINDOW_FRAME = 0.3
#: the subject's size is at least its extent in the aligned foreground (:func:`foreground_extent`: pixels foreground
#: in at least FOREGROUND_SHARE of the followed frames), at most EXTENT_CAP of the followed template's size. Why: the
#: followed template is often a part of the subject, and its size sets the window and the square GrabCut starts from;
#: a part's square on a subject coloured like its backdrop cut only that part, and the part followed changed with the
#: codec (a cut-out's template 48 px at CRF 20, 34 at CRF 30, the cut a dark sliver of a pale cut-out). Chosen on
#: the real-footage composite's seeds 98-100, 103, 105-109 (156 pairs read the stack way, replayed on the followed
#: objects): right at CRF 20 / 30 152 / 141 -> 152 / 147, verdicts flipped 11 -> 7 (share 0.3, 0.4, 0.6: 8 flips; a
#: cap of 4 the same); checked on seeds 110-115 (100 pairs): 94 / 95, 5 -> 97 / 95, 2
FOREGROUND_SHARE = 0.5
EXTENT_CAP = 2.5
#: the subject must be this probable (the count's ensemble, :mod:`.movers.follow`) for a stack to be read
MIN_PROBABILITY = 0.5
#: another followed object at least this probable whose offset from the subject stays within RIGID of their sizes
#: (median over common frames), no farther than two sizes away, is a part of the subject (its square is probably
#: the subject too)
PARTNER_PROBABILITY = 0.5
RIGID = 0.15
#: the spread is read on frames blurred by SPREAD_BLUR px (sub-pixel misalignment of fine texture is not spread),
#: then smoothed by SPREAD_SMOOTH px; a pixel spreading more than SPREAD_BACKGROUND grey levels is surely
#: background. Fitting seeds (LOSO as above): 15 -> 228 / 228, 10 flips with a narrower window; 25 -> 231 / 231, 4;
#: 35 -> 230 / 228, 10 (narrower window)
SPREAD_BLUR = 1.0
SPREAD_SMOOTH = 1.5
SPREAD_BACKGROUND = 25.0
GRABCUT_ITERS = 4
RIM = 2  # window pixels at the rim, surely background
VIEW = 40  # the view's side (pixels)
MIN_CUT = 30  # fewer pixels cut: no view
TEXTURE_BLUR = 1.0  # the views are compared blurred by this many view pixels
SHIFT = 2  # ... at every shift of up to this many view pixels, the best
#: logistic weights on the texture correlation and the bias, fitted on the real-footage composite's fitting seeds
#: 1, 3, 4, 7, 8, 9 (RID, 240 pairs at CRF 20 and 30): 0.453 is even odds. They were fitted by the experiment that
#: chose the settings (scikit-learn, on views rounded once more); ``benchmarks/fit_stack_score.py`` on the same sets
#: gives (7.6593, -3.5652), even odds at 0.465, and leaving one seed out right 232 / 230 of 240, 4 flipped, 13 of 480
#: views missing. Every figure quoted here and in results/real_footage_composite.md is with these weights
STACK_WEIGHTS = (7.4889, -3.3954)
#: a stack row's length: the view's CIELAB and coverage (see :func:`stack_view`)
STACK_DIM = VIEW * VIEW * 4


def subject_stack(clip: VideoClip, window: Window = (None, None)) -> tuple[np.ndarray, np.ndarray, float, list] | None:
    """(aligned crops [k, n, n, 3] uint8, their in-frame masks [k, n, n], the subject's size in frame pixels, the
    rigid partners' (dx, dy, size)) of the clip's most probable followed object; None when none is probable enough."""
    reads = count_reads(clip, window)
    first = reads[COUNT_FLOORS[0]]
    objects = heads(count_candidates(clip, reads), len(first.idx))
    if not objects or objects[0].probability < MIN_PROBABILITY:
        return None
    top = objects[0]
    H, W = clip.frames.shape[1:3]
    centres, size = top.image / first.scale, top.size / first.scale
    size = max(size, min(foreground_extent(first.masks, top, _radius(size, H, W) * first.scale) / first.scale,
                         EXTENT_CAP * size))
    r = _radius(size, H, W)
    crops, inside = [], []
    span = np.arange(-r, r + 1)
    for s, (x, y) in zip(top.steps, centres):
        crops.append(cv2.getRectSubPix(clip.frames[int(first.idx[s])], (2 * r + 1, 2 * r + 1), (float(x), float(y))))
        inside.append(((y + span >= 0) & (y + span <= H - 1))[:, None] & ((x + span >= 0) & (x + span <= W - 1))[None])
    return np.stack(crops), np.stack(inside), float(size), _partners(objects, first.scale)


def _radius(size: float, H: int, W: int) -> int:
    """The stack window's half side (frame pixels) for a subject of ``size`` (see :data:`WINDOW_SIZES`)."""
    return max(8, int(round(WINDOW_SIZES * size)), int(WINDOW_FRAME * min(H, W)))


def foreground_extent(masks: list[np.ndarray], top: Candidate, radius: float) -> float:
    """The subject's extent (small-frame pixels, the larger side; 0 when none): the background model's foreground
    masks aligned on the followed centre (a window of half side ``radius``), the share of its frames each pixel is
    foreground, and the box of the part at the centre where that share is at least :data:`FOREGROUND_SHARE`."""
    r = max(1, int(round(radius)))
    aligned = [cv2.getRectSubPix(masks[int(s)].astype(np.float32), (2 * r + 1, 2 * r + 1), (float(x), float(y)))
               for s, (x, y) in zip(top.steps, top.image) if int(s) < len(masks)]
    if not aligned:
        return 0.0
    _, lab, stats, _ = cv2.connectedComponentsWithStats((np.mean(aligned, axis=0) >= FOREGROUND_SHARE).astype(np.uint8))
    part = lab[r, r]
    return float(max(stats[part, cv2.CC_STAT_WIDTH], stats[part, cv2.CC_STAT_HEIGHT])) if part else 0.0


def _partners(objects: list, scale: float) -> list[tuple[float, float, float]]:
    """(dx, dy, size), frame pixels, of the followed objects that move rigidly with the first (:data:`RIGID`)."""
    top = objects[0]
    at = {int(s): c for s, c in zip(top.steps, top.image)}
    out = []
    for o in objects[1:]:
        if o.probability < PARTNER_PROBABILITY:
            continue
        d = np.array([c - at[int(s)] for s, c in zip(o.steps, o.image) if int(s) in at])
        if len(d) < 3:
            continue
        off, big = np.median(d, axis=0), max(top.size, o.size)
        if np.median(np.linalg.norm(d - off, axis=1)) < RIGID * big and np.linalg.norm(off) < 2 * big:
            out.append((float(off[0] / scale), float(off[1] / scale), float(o.size / scale)))
    return out


def _spread(crops: np.ndarray) -> np.ndarray:
    """Per pixel, the median over the stack of the largest channel's distance from the (blurred) median image."""
    blurred = np.stack([cv2.GaussianBlur(c.astype(np.float32), (0, 0), SPREAD_BLUR) for c in crops])
    d = _median(np.abs(blurred - _median(blurred)[None]).max(-1))
    return cv2.GaussianBlur(d, (0, 0), SPREAD_SMOOTH)


def _median(stack: np.ndarray) -> np.ndarray:
    """``np.median(stack, axis=0)`` of a float32 stack, the same values, by :func:`.shared.order_stats.order_stats` (numpy's
    lane-by-lane partition along the stacking axis cost a stack view about a tenth of its time)."""
    n = len(stack)
    rows = [np.array(stack[k], np.float32) for k in range(n)]
    if n % 2:
        return order_stats(rows, (n // 2,))[0]
    lo, hi = order_stats(rows, (n // 2 - 1, n // 2))
    return (lo + hi) / np.float32(2)


def _median_image(crops: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """The stack's per-pixel median (uint8) over the frames that see the pixel, 0 where none does: bit for bit
    ``np.nanmedian`` of the seen values, truncated. Pixels every frame sees (most of a window) take
    :func:`.shared.order_stats.median_u8`; only the rest pay for ``np.nanmedian``'s masked path (a third of a stack view's time
    when it read every pixel)."""
    full = seen.all(axis=0)
    part = seen.any(axis=0) & ~full
    image = np.zeros(crops.shape[1:], np.uint8)
    if full.any():
        image[full] = median_u8(np.ascontiguousarray(crops[:, full]))
    if part.any():
        values = np.where(seen[:, part][..., None], crops[:, part].astype(np.float32), np.nan)
        image[part] = np.nan_to_num(np.nanmedian(values, axis=0)).astype(np.uint8)
    return image


def _cut(median: np.ndarray, spread: np.ndarray, seen: np.ndarray, size: float, partners: list) -> np.ndarray | None:
    """The subject's mask in the window (see the module's step 3); None when GrabCut keeps nothing."""
    n = median.shape[0]
    r = n // 2
    yy, xx = np.mgrid[0:n, 0:n] - r
    labels = np.full((n, n), cv2.GC_PR_BGD, np.uint8)
    labels[np.maximum(np.abs(yy), np.abs(xx)) <= size / 2] = cv2.GC_PR_FGD
    for dx, dy, s in partners:
        x0, y0, x1, y1 = (int(round(r + v)) for v in (dx - s / 2, dy - s / 2, dx + s / 2, dy + s / 2))
        labels[max(0, y0):max(0, y1 + 1), max(0, x0):max(0, x1 + 1)] = cv2.GC_PR_FGD
    labels[(spread > SPREAD_BACKGROUND) | (np.maximum(np.abs(yy), np.abs(xx)) >= r - RIM) | ~seen] = cv2.GC_BGD
    if not (labels == cv2.GC_PR_FGD).any():
        return None
    cv2.setRNGSeed(0)  # GrabCut's GMM initialisation: deterministic cuts
    try:
        cv2.grabCut(np.ascontiguousarray(median[..., ::-1]), labels, None, np.zeros((1, 65)), np.zeros((1, 65)),
                    GRABCUT_ITERS, cv2.GC_INIT_WITH_MASK)
    except cv2.error:  # degenerate window (one colour)
        return None
    k, comp, stats, _ = cv2.connectedComponentsWithStats(((labels == cv2.GC_FGD) | (labels == cv2.GC_PR_FGD)).astype(np.uint8))
    if k < 2:
        return None
    mask = comp == (comp[r, r] or 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA])))
    return mask if mask.sum() >= MIN_CUT else None


def stack_view(clip: VideoClip, window: Window = (None, None)) -> np.ndarray | None:
    """[STACK_DIM]: the subject's view (VIEW x VIEW CIELAB, then its coverage) read from its aligned stack; None when
    no probable subject or no cut is found."""
    stack = subject_stack(clip, window)
    if stack is None:
        return None
    crops, seen, size, partners = stack
    image = _median_image(crops, seen)
    mask = _cut(image, _spread(crops), seen.any(axis=0), size, partners)
    if mask is None:
        return None
    ys, xs = np.nonzero(mask)
    box = (slice(ys.min(), ys.max() + 1), slice(xs.min(), xs.max() + 1))
    cover = cv2.resize(mask[box].astype(np.float32), (VIEW, VIEW), interpolation=cv2.INTER_AREA)
    rgb = cv2.resize(np.where(mask[box][..., None], image[box], 0).astype(np.float32), (VIEW, VIEW),
                     interpolation=cv2.INTER_AREA)
    rgb = np.clip(rgb / np.maximum(cover[..., None], 1e-3), 0, 255).astype(np.uint8)  # undo the rim's dimming
    lab = cv2.cvtColor(rgb, cv2.COLOR_RGB2LAB).astype(np.float32)
    return np.concatenate([lab.reshape(-1), cover.reshape(-1)]).astype(np.float32)


def stack_texture(a: np.ndarray, b: np.ndarray) -> float:
    """The best texture correlation of two stack views (:func:`stack_view` rows) over shifts of up to
    :data:`SHIFT` view pixels: :func:`.identity.texture.texture_correlations` of the overlapping parts (pixels both cover
    more than half, L weighted 1 and a, b 1/2 each)."""
    views = []
    for row in (a, b):
        row = np.asarray(row, np.float32)[:STACK_DIM]
        lab = cv2.GaussianBlur(row[:3 * VIEW * VIEW].reshape(VIEW, VIEW, 3), (0, 0), TEXTURE_BLUR)
        views.append((lab, row[3 * VIEW * VIEW:].reshape(VIEW, VIEW)))
    (la, ca), (lb, cb) = views
    best = -1.0
    for dy in range(-SHIFT, SHIFT + 1):
        for dx in range(-SHIFT, SHIFT + 1):
            ya, yb = slice(max(0, dy), VIEW + min(0, dy)), slice(max(0, -dy), VIEW + min(0, -dy))
            xa, xb = slice(max(0, dx), VIEW + min(0, dx)), slice(max(0, -dx), VIEW + min(0, -dx))
            va = np.dstack([la[ya, xa], ca[ya, xa]])[None]
            vb = np.dstack([lb[yb, xb], cb[yb, xb]])[None]
            best = max(best, float(texture_correlations(va, vb)[0, 0]))
    return best


def stack_score(texture: float) -> float:
    """Same-subject probability from the stack views' texture correlation (:data:`STACK_WEIGHTS`)."""
    return float(1.0 / (1.0 + np.exp(-(STACK_WEIGHTS[0] * texture + STACK_WEIGHTS[1]))))
