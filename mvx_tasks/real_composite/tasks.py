"""CNT, AM and RID questions on real footage with photograph cut-outs composited in.

Each builder returns a :class:`~mvx_tasks.synth.common.Planned` (question, options, answer,
render closures, facts) like MVX-Synth's generators, so the same runner, schema and harness
apply. Question wording is drawn from several phrasings per task (nouns, pronouns, synonyms),
because a user asks in their own words; the facts in ``meta`` are for scoring only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..synth.cnt import RELATIONS, _counts, satisfies
from ..synth.common import CANDIDATE_LABELS, Planned, QuestionContext, VideoJob, candidate_options, require_unique
from ..synth.sprites import MOTIONS, Track, motion_track
from .footage import (FPS, OUT_W, T, CutSpec, Plate, Sprite, available_plates, camera_boxes, cut_patch, output_path,
                      plate_frames, random_cut, render, selected_footage, visible_box)

#: moving cut-outs per CNT video (1..MAX_COUNT)
MAX_COUNT = 5
#: how a counted cut-out travels (each crosses a good part of the frame)
CNT_MOTIONS = ("slide", "orbit", "zigzag", "bounce")

CNT_TEMPLATES = (
    ("Count the moving cut-outs in each video. Which candidate video contains {of_them} {than} the Reference "
     "video?"),
    "How many objects move across the footage in each video? Which candidate shows {phrase} {noun} {than} the Reference?",
    "Which candidate video has {phrase} {noun} {than} the Reference video? Count them in each video.",
    "Count the {noun} in each clip. Which candidate contains {phrase} {noun} {than} the Reference clip?",
)
CNT_NOUNS = ("moving objects", "pasted photo cut-outs", "moving cut-outs", "things that move", "moving patches")
AM_TEMPLATES = (
    ("The Reference video shows a cut-out object performing an action over real footage. Which candidate video shows "
     "the same action, possibly performed by a different object?"),
    "Which candidate video shows an object moving in the same way as the main object in the Reference video?",
    "In the Reference video a pasted photograph performs an action. Which candidate shows that action, even if "
    "performed by something that looks different?",
)
RID_TEMPLATES = (
    "Video 1 and Video 2 were filmed in different places. Do they show the same individual (the moving cut-out)?",
    "Is the object moving in Video 2 the same individual as the one in Video 1, seen again elsewhere?",
    "Do Video 1 and Video 2 show the same identity, the same photograph cut-out, at a different scale and place?",
)


#: the wordings that name the cut-outs themselves (template and noun indices): over footage whose own people and
#: vehicles move (``--footage scene_movers``), "objects that move across the footage", "things that move" or "the main
#: object" would take in the scene's movers too, so a question there is asked in one of these instead (drawn as
#: before, so the videos and answers are the same whichever footage set names them)
CUTOUT_WORDING = {"CNT_TEMPLATES": (0, 2, 3), "CNT_NOUNS": (1, 2), "AM_TEMPLATES": (0, 2), "RID_TEMPLATES": (0, 2)}


def _wording(name: str, drawn: int) -> int:
    """The template or noun index a question uses: ``drawn``, or over scene-mover footage the first of
    :data:`CUTOUT_WORDING` where ``drawn`` names something the scene's movers are too."""
    if selected_footage() == "composite" or drawn in CUTOUT_WORDING[name]:
        return drawn
    return CUTOUT_WORDING[name][0] if name != "CNT_NOUNS" else CUTOUT_WORDING[name][1]


def _plate(rng: np.random.Generator) -> Plate:
    plates = available_plates()
    return plates[int(rng.integers(len(plates)))]


def _scene(plate: Plate, rng: np.random.Generator):
    """A start frame, a camera path and plate pixels per output pixel."""
    src = plate_frames(plate)
    start = int(rng.integers(0, max(1, len(src) - T + 1)))
    boxes = camera_boxes(rng, src.shape[1:3], moving=plate.textured)
    return start, boxes, float(np.mean(boxes[:, 2])) / OUT_W


def _place(rng: np.random.Generator, box: tuple[float, float, float, float], radii: list[float]) -> list[tuple]:
    """Centres inside ``box``, kept apart by their radii when possible (rejection sampling)."""
    pts: list[tuple[float, float]] = []
    for r in radii:
        best = None
        for _ in range(60):
            p = (float(rng.uniform(box[0], box[2])), float(rng.uniform(box[1], box[3])))
            gap = min([np.hypot(p[0] - q[0], p[1] - q[1]) - r - rr for q, rr in zip(pts, radii)] + [1e9])
            if best is None or gap > best[0]:
                best = (gap, p)
            if gap > 4:
                break
        pts.append(best[1])
    return pts


@dataclass
class MoverTruth:
    """One cut-out of a rendered video as the generator placed it: its centre in every output frame
    (output pixels), its diameter there, and whether it moves on its own (a still cut-out is glued to
    the scene). For benchmarks that ask which object a tool missed; no tool reads it."""

    centres: np.ndarray  # [T, 2]
    diameter: float
    moving: bool


class CompositeVideo:
    """One video's render (``VideoJob.render``): each cut-out performs its motion over the plate under a
    random camera. The scene (camera, placement, motions) is drawn once, on the first call of either
    method, so asking for :meth:`truth` first leaves the frames exactly as a render alone gives them."""

    def __init__(self, plate: Plate, cuts: list[CutSpec], motions: list[str], diameters: list[float],
                 rng: np.random.Generator, amount: float = 1.0):
        self.plate, self.cuts, self.motions, self.diameters = plate, cuts, motions, diameters
        self.rng, self.amount = rng, amount
        self._scene: tuple | None = None

    def scene(self) -> tuple[int, np.ndarray, list[Sprite], float]:
        """(start frame, camera boxes, sprites, gain), drawn from the video's random stream once."""
        if self._scene is None:
            rng = self.rng
            start, boxes, px = _scene(self.plate, rng)
            d_plate = [d * px for d in self.diameters]
            room = visible_box(boxes, 0.0)
            w, h = room[2] - room[0], room[3] - room[1]
            box = (room[0] + 0.3 * w, room[1] + 0.3 * h, room[2] - 0.3 * w, room[3] - 0.3 * h)
            sprites = []
            for cut, motion, d, p in zip(self.cuts, self.motions, d_plate, _place(rng, box, [x / 2 for x in d_plate])):
                track = Track.still(T, *p) if motion == "still" else motion_track(motion, T, FPS, p, rng, d / 2,
                                                                                   self.amount)
                sprites.append(Sprite(cut_patch(cut, d), track))
            self._scene = (start, boxes, sprites, float(rng.uniform(0.85, 1.15)))
        return self._scene

    def __call__(self) -> np.ndarray:
        start, boxes, sprites, gain = self.scene()
        return render(self.plate, start, boxes, sprites, gain, self.rng)

    def truth(self) -> list[MoverTruth]:
        """Every cut-out's centre path and size in the output frames, in the order they were placed."""
        start, boxes, sprites, _ = self.scene()
        zoom = OUT_W / float(np.mean(boxes[:, 2]))
        return [MoverTruth(output_path(self.plate, start, boxes, sp), sp.patch.rgba.shape[1] * zoom, m != "still")
                for sp, m in zip(sprites, self.motions)]


def build_cnt(ctx: QuestionContext) -> Planned:
    """Which candidate has the same / more / fewer moving cut-outs than the Reference; a still
    cut-out (glued to the scene, moving only with the camera) is a distractor in some videos."""
    rng = ctx.rng(0)
    relation = str(rng.choice(RELATIONS))
    ref = int(rng.integers(2, MAX_COUNT))
    pos = ctx.slot(4)
    counts = _counts(rng, relation, ref, MAX_COUNT, pos, ctx.difficulty.similarity)
    require_unique([satisfies(relation, c, ref) for c in counts], pos, f"{ctx.qid} counts {counts} vs {ref}")
    labels = ("Reference",) + CANDIDATE_LABELS
    jobs, stills, plates = [], {}, {}
    for k, (label, n) in enumerate(zip(labels, [ref] + counts)):
        vr = ctx.rng(k + 1)
        plate = _plate(vr)
        n_still = int(vr.random() < 0.5) if plate.steady else 0
        cuts = [random_cut(vr) for _ in range(n + n_still)]
        motions = [str(vr.choice(CNT_MOTIONS)) for _ in range(n)] + ["still"] * n_still
        diam = [float(vr.uniform(34, 50)) for _ in cuts]
        stills[label] = n_still
        plates[label] = plate.name
        jobs.append(VideoJob(label, CompositeVideo(plate, cuts, motions, diam, vr, amount=0.8)))
    template = CNT_TEMPLATES[_wording("CNT_TEMPLATES", int(rng.integers(len(CNT_TEMPLATES))))]
    noun = CNT_NOUNS[_wording("CNT_NOUNS", int(rng.integers(len(CNT_NOUNS))))]
    phrase, than = {"same": ("the same number of", "as"), "greater": ("more", "than"),
                    "less": ("fewer", "than")}[relation]
    # the pronoun template: "the same number of them", but "more of them" (not "more them")
    of_them = f"{phrase} them" if relation == "same" else f"{phrase} of them"
    question = template.format(phrase=phrase, than=than, noun=noun, of_them=of_them)
    meta = {"relation": relation, "reference_count": ref, "counts": dict(zip(CANDIDATE_LABELS, counts)),
            "still_cutouts": stills, "plates": plates, "noun": noun}
    return Planned(question, candidate_options(), "ABCD"[pos], jobs, meta)


def build_am(ctx: QuestionContext) -> Planned:
    """The candidate whose main cut-out performs the Reference's action; one negative may wear the
    Reference actor's exact look (appearance is no evidence of the same action)."""
    rng = ctx.rng(0)
    pos = ctx.slot(4)
    ref_motion = str(rng.choice(MOTIONS))
    others = [str(m) for m in rng.permutation([m for m in MOTIONS if m != ref_motion])[:3]]
    ref_cut = random_cut(rng)
    lure = int(rng.integers(3)) if rng.random() < ctx.difficulty.similarity else -1
    motions, cuts, neg, n_neg = [], [], iter(others), 0
    for i in range(4):
        if i == pos:
            motions.append(ref_motion)
            cuts.append(random_cut(rng))
        else:
            motions.append(next(neg))
            cuts.append(ref_cut if n_neg == lure else random_cut(rng))
            n_neg += 1
    require_unique([m == ref_motion for m in motions], pos, f"{ctx.qid} motions {motions}")
    jobs = []
    for k, (label, motion, cut) in enumerate(zip(("Reference",) + CANDIDATE_LABELS, [ref_motion] + motions,
                                                 [ref_cut] + cuts)):
        vr = ctx.rng(k + 1)
        plate = _plate(vr)
        extra = int(vr.integers(0, 2)) if plate.steady else 0  # a smaller still cut-out: clutter, not the actor
        jobs.append(VideoJob(label, CompositeVideo(plate, [cut] + [random_cut(vr) for _ in range(extra)],
                                                   [motion] + ["still"] * extra,
                                                   [float(vr.uniform(50, 64))] + [float(vr.uniform(24, 30))] * extra,
                                                   vr)))
    question = AM_TEMPLATES[_wording("AM_TEMPLATES", int(rng.integers(len(AM_TEMPLATES))))]
    meta = {"reference_action": ref_motion, "actions": dict(zip(CANDIDATE_LABELS, motions)),
            "reference_cut": ref_cut.as_dict(), "cuts": {lb: c.as_dict() for lb, c in zip(CANDIDATE_LABELS, cuts)},
            "appearance_lure": CANDIDATE_LABELS[[i for i in range(4) if i != pos][lure]] if lure >= 0 else None}
    return Planned(question, candidate_options(), "ABCD"[pos], jobs, meta)


def build_rid(ctx: QuestionContext) -> Planned:
    """Same cut-out (same piece of the same photograph) in two videos, or a different one: from
    another photograph, or (hard) another piece of the same photograph."""
    rng = ctx.rng(0)
    same = ctx.slot(2) == 0
    first = random_cut(rng)
    if same:
        second = first
    elif rng.random() < 0.5:
        second = random_cut(rng, photo_index=first.photo)
        while abs(second.cx - first.cx) + abs(second.cy - first.cy) < 0.2:
            second = random_cut(rng, photo_index=first.photo)
    else:
        second = random_cut(rng)
        while second.photo == first.photo:
            second = random_cut(rng)
    jobs = []
    for k, (label, cut) in enumerate(zip(("Video 1", "Video 2"), (first, second))):
        vr = ctx.rng(k + 1)
        motion = str(vr.choice(("slide", "orbit", "bounce", "zigzag")))
        jobs.append(VideoJob(label, CompositeVideo(_plate(vr), [cut], [motion], [float(vr.uniform(50, 66))], vr,
                                                   amount=0.8)))
    question = RID_TEMPLATES[_wording("RID_TEMPLATES", int(rng.integers(len(RID_TEMPLATES))))]
    meta = {"same_identity": same, "cuts": {"Video 1": first.as_dict(), "Video 2": second.as_dict()}}
    return Planned(question, {"A": "Yes", "B": "No"}, "A" if same else "B", jobs, meta)


BUILDERS = {"CNT": build_cnt, "AM": build_am, "RID": build_rid}
