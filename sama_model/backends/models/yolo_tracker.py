"""Object tracking with ultralytics YOLO (the paper: YOLOv8m) and its ByteTrack / BoT-SORT tracker.

ultralytics probes the network at import and downloads fonts and weights on demand, so before
importing it we set ``YOLO_OFFLINE=1`` and a writable ``YOLO_CONFIG_DIR`` (with a font when one is
found on the machine), and we resolve the weight file ourselves: a missing file fails at once with
the download URL instead of a hanging download.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
import warnings
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from mvx_tasks.video_decoder import VideoClip, uniform_indices

from ._common import query_nouns, window_bounds
from ._runtime import MODELS, MissingWeightsError, hub_offline, import_or_explain, select_device

__all__ = ["YoloObjectTracker", "prepare_ultralytics_env", "DEFAULT_WEIGHTS"]

DEFAULT_WEIGHTS = "yolov8m.pt"
BACKEND = "object_tracker/yolo"
RELEASES = "https://github.com/ultralytics/assets/releases/download/v8.3.0"
_TRACK_LOCK = threading.Lock()  # a YOLO predictor holds tracker state: one video at a time per process


def _find_font() -> Path | None:
    candidates = [Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
                  Path("/usr/share/fonts/dejavu/DejaVuSans.ttf"), Path("/Library/Fonts/Arial.ttf")]
    try:
        import matplotlib

        candidates.insert(0, Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf")
    except Exception:
        pass
    return next((p for p in candidates if p.is_file()), None)


def prepare_ultralytics_env() -> None:
    """Offline-safe settings that must exist before ``import ultralytics`` (kept if already set)."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    if "YOLO_CONFIG_DIR" not in os.environ:
        base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sama" / "ultralytics"
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError:
            base = Path(tempfile.gettempdir()) / "sama-ultralytics"
            base.mkdir(parents=True, exist_ok=True)
        os.environ["YOLO_CONFIG_DIR"] = str(base)
    font_dir = Path(os.environ["YOLO_CONFIG_DIR"]) / "Ultralytics"
    font = font_dir / "Arial.ttf"
    if not font.exists() and (src := _find_font()) is not None:
        font_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, font)


def _resolve_weights(weights: str, download: bool) -> str:
    """A local weight file, a model ``.yaml`` (random weights), or a name ultralytics may download."""
    p = Path(weights).expanduser()
    if p.is_file() or weights.endswith((".yaml", ".yml")):
        return str(p) if p.is_file() else weights
    from ultralytics.utils import WEIGHTS_DIR

    for folder in (Path.cwd(), Path(WEIGHTS_DIR)):
        if (folder / p.name).is_file() and p.parent == Path("."):
            return str(folder / p.name)
    if download and not hub_offline() and p.parent == Path("."):
        return weights  # ultralytics downloads the official asset
    how = (f"Download it (e.g. `wget {RELEASES}/{p.name}`) and pass the file as `model=/path/to/{p.name}`, "
           f"or put it in {WEIGHTS_DIR}.")
    raise MissingWeightsError(weights, BACKEND, how, reason="no such file and downloads are off (offline)")


class YoloObjectTracker:
    """Detects and tracks objects over a window: unique ids, per-class counts, trajectories."""

    #: old option names still accepted (with a DeprecationWarning) -> their replacement
    DEPRECATED_OPTIONS = {"weights": "model"}

    def __init__(self, model: str | None = None, tracker: str = "bytetrack", device: str = "auto",
                 conf: float = 0.25, iou: float = 0.7, imgsz: int = 640, max_frames: int = 64,
                 download: bool = True, weights: str | None = None) -> None:
        """``model``: an ultralytics weight file (``.pt``, a local path or an official name such as
        ``yolov8m.pt``) or a model ``.yaml`` (random weights); ``weights`` is its deprecated old name."""
        if weights is not None:
            warnings.warn("the yolo backend's weights= option is deprecated: use model=", DeprecationWarning,
                          stacklevel=2)
            model = weights  # given explicitly (profiles use model=): the old name wins over a profile's model
        self.weights = self.model_name = model or DEFAULT_WEIGHTS
        self.device = select_device(device)
        self.tracker = tracker if tracker.endswith((".yaml", ".yml")) else f"{tracker}.yaml"
        if self.tracker not in {"bytetrack.yaml", "botsort.yaml"} and not Path(self.tracker).is_file():
            raise ValueError(f"{BACKEND}: tracker must be 'bytetrack', 'botsort' or a tracker YAML file, "
                             f"not {tracker!r}")
        self.conf, self.iou, self.imgsz, self.max_frames = float(conf), float(iou), int(imgsz), int(max_frames)
        self.download = download

    def _load(self) -> Any:
        prepare_ultralytics_env()
        ultralytics = import_or_explain("ultralytics", BACKEND,
                                        "--no-deps ultralytics && pip install lap polars ultralytics-thop")
        path = _resolve_weights(self.weights, self.download)
        try:
            return ultralytics.YOLO(path)
        except (FileNotFoundError, ConnectionError, OSError) as exc:
            raise MissingWeightsError(self.weights, BACKEND, f"Download it from {RELEASES}/ and pass the file "
                                      f"as `model`.", reason=str(exc)[:200]) from exc

    @property
    def model(self) -> Any:
        return MODELS.get(("ultralytics", self.weights, self.device), self._load)

    def track(self, clip: VideoClip, query: str = "", window=(None, None)) -> dict:
        model = self.model
        s, e = window_bounds(clip, window)
        idx = clip.window(s, e)
        idx = idx[uniform_indices(len(idx), self.max_frames)]
        names: dict[int, str] = dict(model.names)
        wanted = query_nouns(query, vocabulary=list(names.values()))
        classes = [k for k, v in names.items() if v in wanted] or None
        frames = [np.ascontiguousarray(f[:, :, ::-1]) for f in clip.frames[idx]]  # ultralytics wants BGR
        # ultralytics names GPUs by index: "cuda" -> "0", a rank's "cuda:1" -> "1"
        device = "0" if self.device == "cuda" else self.device.split(":", 1)[1] if self.device.startswith("cuda:") \
            else self.device
        with _TRACK_LOCK:
            results = model.track(source=frames, persist=False, tracker=self.tracker, conf=self.conf, iou=self.iou,
                                  imgsz=self.imgsz, classes=classes, device=device, verbose=False,
                                  quantize=16 if self.device.startswith("cuda") else None, stream=False)
        tracks: dict[int, dict] = {}
        per_frame: dict[str, list[int]] = defaultdict(list)
        for t, r in zip(clip.timestamps[idx], results):
            boxes = r.boxes
            frame_counts: Counter = Counter()
            if boxes is not None and len(boxes):
                ids = boxes.id.int().tolist() if boxes.id is not None else [None] * len(boxes)
                for tid, cls, xyxy, sc in zip(ids, boxes.cls.int().tolist(), boxes.xyxy.tolist(), boxes.conf.tolist()):
                    label = names.get(cls, str(cls))
                    frame_counts[label] += 1
                    if tid is None:  # detections the tracker did not (yet) confirm
                        continue
                    tr = tracks.setdefault(tid, {"id": int(tid), "label": label, "times": [], "boxes": [], "scores": []})
                    tr["times"].append(round(float(t), 3))
                    tr["boxes"].append([round(float(v), 1) for v in xyxy])
                    tr["scores"].append(round(float(sc), 4))
            for label in set(per_frame) | set(frame_counts):
                per_frame[label].append(frame_counts.get(label, 0))
        track_list = sorted(tracks.values(), key=lambda d: d["id"])
        counts = Counter(tr["label"] for tr in track_list)
        return {"tracks": track_list, "counts": dict(counts), "max_per_frame": {k: max(v) for k, v in per_frame.items()},
                "window": [round(s, 3), round(e, 3)], "frames_tracked": int(len(idx)),
                "classes": [names[c] for c in classes] if classes else "all", "tracker": self.tracker,
                "model": self.weights}
