"""LiteVisualSimilarity: content, style, identity or motion similarity of two clips' windows, in [0, 1].

One scoring rule per aspect, shared by the ``visual_similarity`` tool (which embeds each video
once and calls :meth:`LiteVisualSimilarity.compare_embeddings`) and :meth:`compare`:

* ``content``: frame embeddings from :mod:`.perception.features` (layout + hashes robust to re-encoding and
  colour shifts); the score is the cosine of the two windows' mean embeddings clipped to [0, 1]
  (:func:`sama_model.backends.similarity_scoring.default_compare`), with each frame's best match.
* ``style``: palette/texture/line statistics independent of layout, damped by the distance of the
  rendering marks (overlays, outlines, shading, banding; see :func:`style_scores`).
* ``identity`` (see :mod:`.identity.compare`): the main moving subject's appearance layout (the segmented
  subject's colours relative to its own median, on an upright grid, one row per frame), for
  re-identification across cameras, backgrounds and lighting: ``score`` is calibrated so >= 0.5
  means "same individual"; ``identity_similarity`` is exp(-median best-match distance / 20) (None
  if no subject found).
* ``motion`` (see :mod:`.motion.activity`): *when* things move, the correlation of the two windows'
  activity profiles, robust to viewpoint and sensor (RGB, depth, edges, thermal), for
  synchronised recordings of one event; ``score`` is the correlation clipped to [0, 1].
"""

from __future__ import annotations

import numpy as np

from mvx_tasks.video_decoder import VideoClip

from ..similarity_scoring import default_compare, reread_pair
from .identity.compare import both_reads, cut_reads, identity_result, moving_rereads, stack_reads
from .identity.descriptor import cut_descriptor, identity_descriptor, subject_locations
from .identity.rows import ROW_DIM, with_stack
from .identity.stack import stack_view
from .motion.activity import N_POINTS, activity_profile, profile_correlation
from .perception.features import MARK_SCALE, content_embedding, rendering_marks, style_embedding
from .shared.frame_memo import FRAME_MEMO
from .shared.sampling import Window, window_indices, window_span

#: how fast the style score falls with the rendering-marks distance (per MARK_SCALE unit); set on
#: MVX-Synth ART (default difficulty, seed 0)
MARK_WEIGHT = 0.2


def style_row(frame: np.ndarray) -> np.ndarray:
    """One frame's style embedding followed by its rendering marks (see :func:`style_scores`)."""
    return np.concatenate([style_embedding(frame), rendering_marks(frame)])


_EMBED = {"content": content_embedding, "style": style_row}


def style_scores(ea: np.ndarray, eb: np.ndarray) -> dict:
    """Style similarity of two clips' style rows: the cosine of the mean palette/texture embeddings,
    damped by exp(-MARK_WEIGHT x distance) where the distance adds up the per-mark differences of the
    clips' median rendering marks in MARK_SCALE units (overlays, outlines, shading, banding)."""
    n = len(MARK_SCALE)
    sa, sb = ea[:, :-n].mean(0), eb[:, :-n].mean(0)
    cos = float(sa @ sb / max(np.linalg.norm(sa) * np.linalg.norm(sb), 1e-9))
    dist = float(np.abs((np.median(ea[:, -n:], 0) - np.median(eb[:, -n:], 0)) / MARK_SCALE).sum())
    score = max(0.0, cos) * float(np.exp(-MARK_WEIGHT * dist))
    return {"score": round(score, 4), "palette_texture_cosine": round(cos, 4), "marks_distance": round(dist, 4)}


def _motion_result(corr: float | None) -> dict:
    """score = correlation clipped to [0, 1]; 0 with ``correlation`` None when a clip has no motion."""
    return {"score": 0.0 if corr is None else round(max(0.0, corr), 4),
            "correlation": None if corr is None else round(corr, 4)}


#: an internal embedding aspect: the identity descriptor of a still camera's clip read the moving camera's
#: way (:meth:`LiteVisualSimilarity.pair_aspects` asks for it)
MOVING_IDENTITY = "identity-moving"
#: ... and both ways, its own (still) read's rows then the moving read's, for a pair near the still-and-moving
#: gate (:func:`.identity.compare.near_gate`), whose result also gives the other side's score
BOTH_IDENTITY = "identity-both"
#: ... and its own read with the subject's stack view (:func:`.identity.rows.with_stack`), for a pair whose camera moves
#: (:func:`.identity.compare.stack_reads`); a moving camera's own read defers its per-frame cuts
#: (:attr:`.identity.rows.ReadPath.DEFERRED`)
STACKED_IDENTITY = "identity-stacked"
#: ... and with its per-frame cuts too, for a pair that needs them (:func:`.identity.compare.cut_reads`)
CUT_IDENTITY = "identity-cut"


class LiteVisualSimilarity:
    """Options: ``n_frames`` (frames sampled per window for content and style)."""

    def __init__(self, n_frames: int = 8) -> None:
        self.n_frames = int(n_frames)

    def _identity(self, clip: VideoClip, window: Window, moving_path: bool = False, stacked: bool = False,
                  cuts: bool = False) -> np.ndarray | None:
        """The clip's identity rows (memoised per clip and window; the subject's locations once for every read):
        ``moving_path`` read the moving camera's way; ``stacked`` with the stack view (memoised apart); ``cuts``
        with a moving camera's per-frame cuts (else deferred, :attr:`.identity.rows.ReadPath.DEFERRED`)."""
        idx = window_indices(clip, window, 32)
        start, key = int(idx[0]) if len(idx) else 0, (int(len(idx)), int(idx[-1]) if len(idx) else -1)
        located = (FRAME_MEMO.get(clip.frames, start, ("identity-located", *key),
                                  lambda _f: subject_locations(clip.frames[idx])) if len(idx) >= 3 else None)

        def read(_frame: np.ndarray) -> np.ndarray | None:
            if cuts and located is not None:  # (a deferred read's cuts: never an empty re-read, see cut_descriptor)
                return cut_descriptor(clip.frames[idx], located)
            return identity_descriptor(clip.frames[idx], moving_path=moving_path, cuts=moving_path, located=located)

        rows = FRAME_MEMO.get(clip.frames, start, ("identity-layout", *key, moving_path, cuts), read)
        if not stacked or rows is None:
            return rows
        return with_stack(rows, FRAME_MEMO.get(clip.frames, start, ("stack-view", *key),
                                               lambda _f: stack_view(clip, window)))

    def _activity(self, clip: VideoClip, window: Window) -> np.ndarray | None:
        idx = window_indices(clip, window)
        key = ("activity", int(len(idx)), int(idx[-1]) if len(idx) else -1)
        return FRAME_MEMO.get(clip.frames, int(idx[0]) if len(idx) else 0, key,
                              lambda _: activity_profile(clip.frames[idx]))

    def embed(self, clip: VideoClip, window: Window = (None, None), aspect: str = "content") -> np.ndarray:
        """[n, d] L2-normalised frame embeddings of up to ``n_frames`` frames of the window
        (``identity``: the subject's layout grid per frame where found, a moving camera's deferred to one row
        (:attr:`.identity.rows.ReadPath.DEFERRED`); one zero row if none)."""
        if aspect == BOTH_IDENTITY:
            reads = [d for d in (self._identity(clip, window), self._identity(clip, window, moving_path=True))
                     if d is not None]
            return (np.concatenate(reads) if reads else np.zeros((1, ROW_DIM))).astype(np.float32)
        if aspect in ("identity", MOVING_IDENTITY, STACKED_IDENTITY, CUT_IDENTITY):
            d = self._identity(clip, window, moving_path=aspect == MOVING_IDENTITY,
                               stacked=aspect in (STACKED_IDENTITY, CUT_IDENTITY), cuts=aspect == CUT_IDENTITY)
            return (np.zeros((1, ROW_DIM), np.float32) if d is None else d).astype(np.float32)
        if aspect == "motion":
            p = self._activity(clip, window)
            return (np.zeros((1, N_POINTS), np.float32) if p is None else p[None]).astype(np.float32)
        if aspect not in _EMBED:
            raise ValueError(f"aspect must be 'content', 'style', 'identity' or 'motion', not {aspect!r}")
        idx = window_indices(clip, window, self.n_frames)
        fn = _EMBED[aspect]
        rows = [FRAME_MEMO.get(clip.frames, int(i), ("embed", aspect), fn) for i in idx]
        dim = len(fn(np.zeros((8, 8, 3), np.uint8))) if not rows else len(rows[0])
        return np.stack(rows).astype(np.float32) if rows else np.zeros((0, dim), np.float32)

    def pair_aspects(self, ea: np.ndarray, eb: np.ndarray, aspect: str) -> tuple[str, str]:
        """The aspect each side must be embedded under before the two are compared (the tool asks again with the
        new embeddings until nothing new is asked): for ``identity``, both sides' stack views first where a camera
        moves (:data:`STACKED_IDENTITY`, :func:`.identity.compare.stack_reads`); then a moving camera's deferred cuts where
        the pair needs them (:data:`CUT_IDENTITY`, :func:`.identity.compare.cut_reads`), and a still camera's clip paired
        with a clearly moving one is read again the moving camera's way (:data:`MOVING_IDENTITY`,
        :func:`.identity.compare.moving_rereads`), or both ways when the pair lies near that gate (:data:`BOTH_IDENTITY`,
        :func:`.identity.compare.both_reads`); every other pair as given."""
        if aspect != "identity":
            return aspect, aspect
        a, b = (None if not np.asarray(e).any() else e for e in (ea, eb))
        sa, sb = stack_reads(a, b)
        if sa or sb:
            return STACKED_IDENTITY if sa else aspect, STACKED_IDENTITY if sb else aspect
        ca, cb = cut_reads(a, b)
        ra, rb = moving_rereads(a, b)
        na, nb = both_reads(a, b)
        return tuple(CUT_IDENTITY if c else BOTH_IDENTITY if n else MOVING_IDENTITY if r else aspect
                     for c, r, n in ((ca, ra, na), (cb, rb, nb)))

    def compare_embeddings(self, ea: np.ndarray, eb: np.ndarray, aspect: str) -> dict | None:
        """Scores from cached embeddings (the tool layer's path): the calibrated identity score for
        ``identity`` rows, the activity correlation for ``motion``; None for other aspects, which
        the tool scores by cosine."""
        if aspect == "motion":
            return _motion_result(profile_correlation(ea, eb))
        if aspect == "style":
            return style_scores(np.asarray(ea, np.float32), np.asarray(eb, np.float32))
        if aspect == "identity":
            return identity_result(ea, eb)
        return None

    def compare(
        self,
        a: VideoClip,
        b: VideoClip,
        window_a: Window = (None, None),
        window_b: Window = (None, None),
        aspect: str = "content",
    ) -> dict:
        """The tool's score for two clips (each window embedded here rather than cached)."""
        spans = {"aspect": aspect, "window_a": window_span(a, window_a), "window_b": window_span(b, window_b)}
        ea, eb = self.embed(a, window_a, aspect), self.embed(b, window_b, aspect)
        ea, eb = reread_pair(ea, eb, self.pair_aspects, aspect,
                             lambda asp: self.embed(a, window_a, asp), lambda asp: self.embed(b, window_b, asp))
        if len(ea) == 0 or len(eb) == 0:
            return {"score": 0.0, "frame_scores": [], **spans, "note": "empty window"}
        out = self.compare_embeddings(ea, eb, aspect)
        return {**(out if out is not None else default_compare(ea, eb)), **spans}
