"""ART (Art Style): which candidate shares the reference's rendering style over different content.

Appendix A: the positive comes from the same show, negatives from other shows; the model must
judge how things are drawn, not what. A style is five attributes (palette, outline, shading,
texture overlay, posterisation); negatives differ from the reference in a few of them (fewer on
hard) and most keep its palette, so a mean-colour match does not find the positive.
"""
from __future__ import annotations

import numpy as np

from .camera import View, camera_path
from .common import CANDIDATE_LABELS, GenerationError, Planned, QuestionContext, VideoJob, candidate_options, require_unique
from .encode import FPS
from .scene import Grade, Layer, Scene, background, render
from .sprites import SHAPES, TEXTURES, make_patch, motion_track
from .stage import place

T = 24
PALETTES: dict[str, list[tuple[int, int, int]]] = {
    "pastel": [(244, 214, 222), (203, 229, 232), (250, 236, 196), (196, 222, 190), (222, 204, 240)],
    "neon": [(20, 16, 40), (255, 40, 160), (40, 255, 220), (250, 250, 70), (130, 70, 255)],
    "earth": [(150, 120, 80), (95, 110, 60), (200, 170, 120), (120, 70, 40), (220, 200, 160)],
    "ocean": [(20, 60, 110), (40, 120, 170), (120, 200, 220), (230, 240, 245), (10, 30, 60)],
    "sepia": [(112, 66, 20), (170, 120, 70), (220, 190, 140), (60, 40, 20), (240, 225, 200)],
    "primary": [(240, 240, 235), (220, 30, 40), (30, 70, 200), (250, 210, 20), (25, 25, 25)],
}
ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "palette": tuple(PALETTES),
    "outline": ("none", "thin-dark", "thick-dark", "light"),
    "shading": ("flat", "soft", "cel", "hatch"),
    "overlay": ("none", "grain", "halftone", "scanlines"),
    "posterize": ("off", "on"),
}
DIFFS = {"easy": (3, 4), "default": (2, 3), "hard": (1, 2)}  # attributes a negative changes


def style_name(style: dict) -> str:
    return "/".join(style[a] for a in ATTRIBUTES)


PALETTE_CHANGE = {"easy": 0.5, "default": 0.2, "hard": 0.1}  # most negatives keep the reference's palette


def _variant(rng: np.random.Generator, ref: dict, n_change: int, p_palette: float) -> dict:
    others = [a for a in ATTRIBUTES if a != "palette"]
    if rng.random() < p_palette:
        attrs = ["palette"] + list(rng.choice(others, size=n_change - 1, replace=False))
    else:
        attrs = list(rng.choice(others, size=n_change, replace=False))
    out = dict(ref)
    for a in attrs:
        out[a] = str(rng.choice([v for v in ATTRIBUTES[a] if v != ref[a]]))
    return out


def _style_hook(style: dict, rng: np.random.Generator):
    overlay, poster = style["overlay"], style["posterize"] == "on"
    h, w = 144, 192
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    grain = rng.standard_normal((h, w, 1)).astype(np.float32) * 14
    dots = (((xx % 5) - 2) ** 2 + ((yy % 5) - 2) ** 2 < 3).astype(np.float32)[..., None]

    def hook(frame: np.ndarray, t: int) -> np.ndarray:
        if poster:
            frame = np.round(np.clip(frame, 0, 255) / 64.0) * 64.0
        if overlay == "grain":
            frame = frame + grain
        elif overlay == "halftone":
            frame = frame * (1 - 0.22 * dots)
        elif overlay == "scanlines":
            frame = frame * np.where(yy[..., None] % 3 == 0, 0.78, 1.0)
        return frame
    return hook


def _render(style: dict, ctx: QuestionContext, k: int):
    def run() -> np.ndarray:
        rng = ctx.rng(k + 1)
        pal = PALETTES[style["palette"]]
        order = rng.permutation(len(pal))
        bg_cols = [pal[i] for i in order[:3]]
        fg_cols = [pal[i] for i in order[2:]] + [pal[order[0]]]
        kind = str(rng.choice(("noise", "stripes", "blobs", "floor", "tiles")))
        bg = background(kind, 320, 240, bg_cols, rng, clutter=3)
        if style["posterize"] == "on" or style["shading"] == "flat":
            bg = (bg // 24) * 24.0
        cam = camera_path(T, View(160, 120, 0.8), View(160 + rng.uniform(-15, 15), 120, rng.uniform(0.8, 0.9)), rng=rng)
        box = cam.safe_box(10)
        n = int(rng.integers(3, 6))
        radii = [float(rng.uniform(10, 18)) for _ in range(n)]
        width = {"none": 0, "thin-dark": 1, "thick-dark": 3, "light": 2}[style["outline"]]
        ocol = (245, 245, 240) if style["outline"] == "light" else (20, 18, 22)
        layers = []
        for r, (x, y) in zip(radii, place(rng, [r * 1.3 for r in radii], box)):
            col = fg_cols[int(rng.integers(len(fg_cols)))]
            tex = "solid" if style["shading"] in ("flat", "cel") else str(rng.choice(TEXTURES[:3]))
            patch = make_patch(str(rng.choice(SHAPES)), r, col, rng, texture_kind=tex, shading=style["shading"],
                               outline_width=width, outline_colour=ocol, colour2=fg_cols[0])
            m = str(rng.choice(("drift", "bounce", "still", "slide", "spin")))
            layers.append(Layer(patch, motion_track(m, T, FPS, (x, y), rng, size=r, amount=0.5)))
        grade = Grade(gain=float(rng.uniform(0.8, 1.2)), tint=tuple(rng.normal(0, 6, 3)), noise=1.0)
        return render(Scene(bg, layers, cam, grade), rng, post=_style_hook(style, rng))
    return run


def build(ctx: QuestionContext) -> Planned:
    rng = ctx.rng(0)
    pos = ctx.slot(4)
    ref = {a: str(rng.choice(v)) for a, v in ATTRIBUTES.items()}
    lo, hi = DIFFS[ctx.difficulty.name]
    styles: list[dict] = []
    for i in range(4):
        if i == pos:
            styles.append(dict(ref))
            continue
        for _ in range(100):
            s = _variant(rng, ref, int(rng.integers(lo, hi + 1)), PALETTE_CHANGE[ctx.difficulty.name])
            if s not in styles:
                break
        else:
            raise GenerationError(f"{ctx.qid}: could not draw distinct negative styles")
        styles.append(s)
    require_unique([s == ref for s in styles], pos, f"{ctx.qid} styles")
    jobs = [VideoJob("Reference", _render(ref, ctx, 0))]
    jobs += [VideoJob(lbl, _render(s, ctx, k + 1)) for k, (lbl, s) in enumerate(zip(CANDIDATE_LABELS, styles))]
    question = ("Ignore what is depicted and look at how it is drawn: colour palette, outlines, shading, texture and "
                "colour banding. Which candidate video has the same visual style as the Reference video?")
    meta = {"reference_style": style_name(ref), "styles": {lbl: style_name(s) for lbl, s in zip(CANDIDATE_LABELS, styles)},
            "attributes_changed": {lbl: [a for a in ATTRIBUTES if s[a] != ref[a]] for lbl, s in zip(CANDIDATE_LABELS, styles)}}
    return Planned(question, candidate_options(), "ABCD"[pos], jobs, meta)
