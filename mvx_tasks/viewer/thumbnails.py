"""The frames tools looked at, extracted through the project's decoder as small JPEG files."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from .build import FrameRequest

THUMB_SIDE = 128  # thumbnails' longer side in pixels
THUMB_QUALITY = 70


# ----------------------------------------------------------------------------- thumbnails

@dataclass
class Frame:
    t: float
    src: str  # path relative to the site root
    calls: list[str] = field(default_factory=list)  # "t3 video_reader"


class Thumbnailer:
    """Extracts the frames tools looked at through the project's decoder, as small JPEGs.

    Decodes with :func:`mvx_tasks.video_decoder.load_video` at the tools' frame count, so timestamps are
    the ones the tools saw; each (video, frame) is written once even when several questions or
    calls look at it.
    """

    def __init__(self, site: Path, side: int = THUMB_SIDE, quality: int = THUMB_QUALITY) -> None:
        self.site, self.side, self.quality = site, side, quality
        self.written = 0

    def filmstrip(self, path: Path, requests: list[FrameRequest]) -> tuple[list[Frame], str | None]:
        """The distinct frames all requests looked at, in time order, or ([], why) when the video fails."""
        import numpy as np
        from PIL import Image

        from ..video_decoder import VideoDecodeError, load_video

        if not requests:
            return [], None
        try:
            clip = load_video(path, max_side=max(self.side, 64))
        except VideoDecodeError as exc:
            return [], str(exc)
        if clip.n_frames == 0:
            return [], "no frames decoded"
        picked: dict[int, list[str]] = {}
        for req in requests:
            if req.times:
                idx = [int(np.argmin(np.abs(clip.timestamps - t))) for t in req.times]
            else:
                _, ts = clip.sample(req.n, req.window[0], req.window[1])
                idx = [int(np.argmin(np.abs(clip.timestamps - t))) for t in ts]
            for i in idx:
                tag = f"{req.call_id} {req.tool}"
                lst = picked.setdefault(i, [])
                if tag not in lst:
                    lst.append(tag)
        folder = self.site / "thumbs" / hashlib.sha1(str(Path(path).resolve()).encode()).hexdigest()[:16]
        folder.mkdir(parents=True, exist_ok=True)
        frames = []
        for i in sorted(picked):
            f = folder / f"{i:04d}.jpg"
            if not f.exists():
                img = Image.fromarray(clip.frames[i])
                img.thumbnail((self.side, self.side))
                img.save(f, "JPEG", quality=self.quality)
                self.written += 1
            frames.append(Frame(t=float(clip.timestamps[i]), src=f.relative_to(self.site).as_posix(), calls=picked[i]))
        return frames, None
