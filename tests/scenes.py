"""Constructed clips with known contents, for the lite backends' tests and benchmark.

Small and deterministic: shapes of known colour at known places over a chosen background, and
camera moves made by sliding/scaling a crop window over a larger image (so the true pan, tilt
and zoom are known exactly). Clips are built in memory as :class:`VideoClip` objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from mvx_tasks.video_decoder import VideoClip

RGB: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 30),
    "green": (40, 180, 60),
    "blue": (40, 70, 220),
    "yellow": (235, 215, 40),
    "orange": (245, 140, 20),
    "purple": (140, 50, 190),
    "cyan": (40, 200, 210),
    "pink": (245, 120, 200),
    "white": (245, 245, 245),
    "black": (15, 15, 15),
    "grey": (128, 128, 128),
    "brown": (120, 70, 30),
}


def make_clip(frames: np.ndarray | list[np.ndarray], fps: float = 8.0, path: str = "<memory>") -> VideoClip:
    """A VideoClip straight from an array of RGB frames (no file)."""
    arr = np.ascontiguousarray(np.stack(list(frames)) if isinstance(frames, list) else frames, dtype=np.uint8)
    n = arr.shape[0]
    return VideoClip(
        path=path,
        frames=arr,
        timestamps=np.arange(n) / fps,
        fps=fps,
        duration=n / fps,
        native_size=(arr.shape[2], arr.shape[1]),
    )


def background(
    h: int, w: int, kind: str = "noise", seed: int = 0, base: tuple[int, int, int] = (150, 140, 120)
) -> np.ndarray:
    """A plain, gradient or low-contrast textured (smoothed noise) background."""
    rng = np.random.default_rng(seed)
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    if kind == "gradient":
        img += np.linspace(-30, 30, w, dtype=np.float32)[None, :, None]
    elif kind == "noise":
        noise = rng.normal(0, 1, (h // 4 + 1, w // 4 + 1, 3)).astype(np.float32)
        noise = cv2.resize(noise, (w, h), interpolation=cv2.INTER_CUBIC)
        img += 10 * noise
    return np.clip(img, 0, 255).astype(np.uint8)


def textured_image(h: int, w: int, seed: int = 0) -> np.ndarray:
    """A high-texture image (multi-scale coloured noise) for flow-based camera-motion tests."""
    rng = np.random.default_rng(seed)
    img = np.zeros((h, w, 3), np.float32)
    for cell, amp in ((4, 40), (16, 50), (64, 40)):
        noise = rng.uniform(-1, 1, (h // cell + 2, w // cell + 2, 3)).astype(np.float32)
        img += amp * cv2.resize(noise, (w, h), interpolation=cv2.INTER_CUBIC)
    return np.clip(img + 128, 0, 255).astype(np.uint8)


def shape_points(shape: str, center: tuple[float, float], size: float, angle: float = 0.0) -> np.ndarray:
    """Polygon vertices of a named shape (``size`` = circumradius in pixels, ``angle`` degrees)."""
    cx, cy = center
    if shape == "circle":
        t = np.linspace(0, 2 * np.pi, 64, endpoint=False)
        r = np.full_like(t, size)
    elif shape == "star":
        t = np.linspace(0, 2 * np.pi, 10, endpoint=False) - np.pi / 2
        r = np.where(np.arange(10) % 2 == 0, size, size * 0.42)
    elif shape in ("triangle", "square", "pentagon", "hexagon"):
        k = {"triangle": 3, "square": 4, "pentagon": 5, "hexagon": 6}[shape]
        t = np.linspace(0, 2 * np.pi, k, endpoint=False) - np.pi / 2 + (np.pi / 4 if k == 4 else 0)
        r = np.full_like(t, size)
    elif shape == "cross":
        a, b = size, size * 0.36
        pts = np.array(
            [
                [-b, -a],
                [b, -a],
                [b, -b],
                [a, -b],
                [a, b],
                [b, b],
                [b, a],
                [-b, a],
                [-b, b],
                [-a, b],
                [-a, -b],
                [-b, -b],
            ],
            np.float64,
        )
        t0 = np.deg2rad(angle)
        rot = np.array([[np.cos(t0), -np.sin(t0)], [np.sin(t0), np.cos(t0)]])
        return pts @ rot.T + np.array([cx, cy])
    elif shape == "rectangle":
        pts = np.array([[-1.6, -0.8], [1.6, -0.8], [1.6, 0.8], [-1.6, 0.8]]) * size / 1.8
        a = np.deg2rad(angle)
        rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        return pts @ rot.T + np.array([cx, cy])
    else:
        raise ValueError(f"unknown shape {shape!r}")
    t = t + np.deg2rad(angle)
    return np.stack([cx + r * np.cos(t), cy + r * np.sin(t)], axis=1)


def draw_shape(
    img: np.ndarray,
    shape: str,
    color: str | tuple[int, int, int],
    center: tuple[float, float],
    size: float,
    angle: float = 0.0,
) -> np.ndarray:
    """Draw a filled, anti-aliased shape in place (and return the image)."""
    rgb = RGB[color] if isinstance(color, str) else color
    if shape == "ring":  # a circle with a hole (45% of the radius) showing what is underneath
        mask = np.zeros(img.shape[:2], np.uint8)
        cv2.fillPoly(
            mask,
            [np.round(shape_points("circle", center, size) * 16).astype(np.int32)],
            255,
            lineType=cv2.LINE_AA,
            shift=4,
        )
        cv2.fillPoly(
            mask,
            [np.round(shape_points("circle", center, 0.45 * size) * 16).astype(np.int32)],
            0,
            lineType=cv2.LINE_AA,
            shift=4,
        )
        alpha = mask[..., None].astype(np.float32) / 255.0
        img[:] = (img * (1 - alpha) + np.asarray(rgb, np.float32) * alpha).astype(np.uint8)
        return img
    pts = np.round(shape_points(shape, center, size, angle) * 16).astype(np.int32)
    cv2.fillPoly(img, [pts], rgb, lineType=cv2.LINE_AA, shift=4)
    return img


@dataclass
class Mover:
    """A shape whose centre/size/angle are functions of the frame index (linear by default)."""

    shape: str
    color: str
    start: tuple[float, float]
    velocity: tuple[float, float] = (0.0, 0.0)  # pixels per frame
    size: float = 12.0
    growth: float = 0.0  # size change per frame (pixels)
    spin: float = 0.0  # degrees per frame
    appear: int = 0  # first frame where it is visible
    vanish: int = 10**9  # first frame where it is gone

    def state(self, i: int, w: int, h: int) -> tuple[tuple[float, float], float, float] | None:
        if not (self.appear <= i < self.vanish):
            return None
        x = self.start[0] + self.velocity[0] * i
        y = self.start[1] + self.velocity[1] * i
        return (x, y), self.size + self.growth * i, self.spin * i


def render_scene(
    movers: list[Mover],
    n_frames: int = 24,
    size: tuple[int, int] = (224, 224),
    bg: str = "noise",
    seed: int = 0,
    fps: float = 8.0,
) -> VideoClip:
    """Shapes over a static background (width, height = ``size``)."""
    w, h = size
    base = background(h, w, bg, seed)
    frames = []
    for i in range(n_frames):
        img = base.copy()
        for m in movers:
            st = m.state(i, w, h)
            if st is not None:
                draw_shape(img, m.shape, m.color, st[0], st[1], st[2])
        frames.append(img)
    return make_clip(frames, fps=fps)


def camera_clip(
    image: np.ndarray,
    n_frames: int = 24,
    out: int = 224,
    start: tuple[float, float] | None = None,
    shift: tuple[float, float] = (0.0, 0.0),
    zoom: float = 1.0,
    crop: int | None = None,
    fps: float = 8.0,
) -> VideoClip:
    """Slide/scale a square crop window over ``image``.

    ``shift`` is the window's move per frame in image pixels (+x: window moves right, so the
    camera pans right and the content moves left in the output); ``zoom`` is the per-frame factor
    by which the window *shrinks* (>1: zoom in, content grows).
    """
    ih, iw = image.shape[:2]
    side = float(crop or min(ih, iw) // 2)
    cx, cy = start if start is not None else (iw / 2, ih / 2)
    frames = []
    for i in range(n_frames):
        s = side / zoom**i
        x, y = cx + shift[0] * i, cy + shift[1] * i
        src = np.float32([[x - s / 2, y - s / 2], [x + s / 2, y - s / 2], [x - s / 2, y + s / 2]])
        dst = np.float32([[0, 0], [out, 0], [0, out]])
        m = cv2.getAffineTransform(src, dst)
        frames.append(cv2.warpAffine(image, m, (out, out), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT))
    return make_clip(frames, fps=fps)


def jpeg_roundtrip(frames: np.ndarray, quality: int = 30) -> np.ndarray:
    """Re-encode every frame as JPEG (a near-duplicate's compression artefacts)."""
    out = []
    for f in frames:
        _ok, buf = cv2.imencode(".jpg", cv2.cvtColor(f, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality])
        out.append(cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB))
    return np.stack(out)


def panning_plate(monkeypatch):
    """A grey real-composite plate whose own content pans 2 px left a frame (``footage.plate_frames`` and
    ``plate_offsets`` patched to serve it), and a pure red 20-px square patch, nowhere in its texture: what
    the composite's geometry tests film."""
    from mvx_tasks.real_composite import footage
    from mvx_tasks.synth.sprites import Patch

    big = cv2.cvtColor(cv2.cvtColor(textured_image(400, 520, 7), cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)
    frames = np.stack([big[40:340, 60 + 2 * t:460 + 2 * t] for t in range(footage.T)])
    plate = footage.Plate("test-pan", "pkg", "clip.mp4", 0, footage.T, (0, 0, 400, 300), 1)
    monkeypatch.setattr(footage, "plate_frames", lambda p: frames)
    offsets = footage.content_offsets(frames)
    monkeypatch.setattr(footage, "plate_offsets", lambda p: offsets)
    rgba = np.zeros((20, 20, 4), np.float32)
    rgba[..., 0], rgba[..., 3] = 255.0, 1.0
    return plate, Patch(rgba)
