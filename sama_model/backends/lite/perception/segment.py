"""One object in one frame, as every lite tool reads it: its box, outline, colour and shape names."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


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


def box_iou(a: tuple[float, ...] | list[float], b: tuple[float, ...] | list[float]) -> float:
    """Intersection over union of two ``[x1, y1, x2, y2]`` boxes."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else 0.0
