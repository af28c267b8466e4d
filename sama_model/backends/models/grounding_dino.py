"""Scene graphs from GroundingDINO (the paper's) through transformers: boxes, colours, relations.

The query's nouns (or a fallback vocabulary) become GroundingDINO's text prompt
("person . car ."); each predicted box is labelled by the phrase whose tokens score highest, so
labels are always one of the asked names. Frames of one window are batched through the model.
Colours are the dominant named colour inside each box and relations come from box geometry.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from mvx_tasks.video_decoder import VideoClip

from ._common import FALLBACK_VOCABULARY, color_name, query_nouns, sample_window, window_bounds
from ._runtime import MODELS, resolve_hf_weights, select_device, select_dtype, wrap_load_error

__all__ = ["GroundingDinoSceneGraph", "DEFAULT_MODEL", "box_relation"]

DEFAULT_MODEL = "IDEA-Research/grounding-dino-base"
BACKEND = "scene_graph/grounding_dino"


def box_relation(a: list[float], b: list[float]) -> str:
    """Spatial predicate of box ``a`` relative to box ``b`` (pixels, x right, y down)."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    area_a = max(1e-6, (a[2] - a[0]) * (a[3] - a[1]))
    area_b = max(1e-6, (b[2] - b[0]) * (b[3] - b[1]))
    if ix * iy / area_a > 0.9 and area_a < area_b:
        return "inside"
    if ix * iy / area_b > 0.9 and area_b < area_a:
        return "contains"
    dx = (a[0] + a[2]) / 2 - (b[0] + b[2]) / 2
    dy = (a[1] + a[3]) / 2 - (b[1] + b[3]) / 2
    if abs(dx) >= abs(dy):
        return "left of" if dx < 0 else "right of"
    return "above" if dy < 0 else "below"


class GroundingDinoSceneGraph:
    """Open-vocabulary per-frame objects and their relations for a window of a video."""

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "auto", dtype: str = "auto",
                 box_threshold: float = 0.35, batch_size: int = 4, max_objects: int = 12, nms_iou: float = 0.5,
                 vocabulary: list[str] | None = None, local_files_only: bool = False) -> None:
        self.model_name = model
        self.device = select_device(device)
        self.dtype = select_dtype(self.device, dtype)
        self.box_threshold, self.batch_size = float(box_threshold), int(batch_size)
        self.max_objects, self.nms_iou = int(max_objects), float(nms_iou)
        self.vocabulary = tuple(vocabulary) if vocabulary else FALLBACK_VOCABULARY
        self.local_files_only = local_files_only

    def _load(self) -> tuple[Any, Any]:
        from transformers import AutoModelForZeroShotObjectDetection, AutoProcessor

        path = resolve_hf_weights(self.model_name, BACKEND, local_files_only=self.local_files_only)
        how = f"Pass a local folder as `model` or run `huggingface-cli download {self.model_name}`."

        def load():
            processor = AutoProcessor.from_pretrained(path)
            model = AutoModelForZeroShotObjectDetection.from_pretrained(path, dtype=self.dtype)
            return model.to(self.device).eval(), processor

        return wrap_load_error(self.model_name, BACKEND, how, load)

    def loaded(self) -> tuple[Any, Any]:
        return MODELS.get(("grounding-dino", self.model_name, self.device, str(self.dtype)), self._load)

    def _prompt(self, labels: list[str]) -> tuple[str, list[tuple[int, int]]]:
        """GroundingDINO text ("a . b .") and each label's character span in it."""
        text, spans = "", []
        for label in labels:
            spans.append((len(text), len(text) + len(label)))
            text += label + " . "
        return text.strip(), spans

    def _detect(self, frames: np.ndarray, labels: list[str]) -> list[list[tuple[str, float, list[float]]]]:
        """Per frame: (label, score, [x1, y1, x2, y2]) after thresholding and per-label NMS."""
        import torch
        from torchvision.ops import batched_nms

        model, processor = self.loaded()
        text, spans = self._prompt(labels)
        enc = processor.tokenizer(text, return_offsets_mapping=True)
        offsets = enc["offset_mapping"]
        token_phrase = [next((p for p, (s, e) in enumerate(spans) if s <= a < e), -1) if b > a else -1
                        for a, b in offsets]
        h, w = frames.shape[1:3]
        results = []
        for i in range(0, len(frames), self.batch_size):
            chunk = list(frames[i:i + self.batch_size])
            inputs = processor(images=chunk, text=[text] * len(chunk), return_tensors="pt").to(self.device)
            inputs["pixel_values"] = inputs["pixel_values"].to(self.dtype)
            with torch.inference_mode():
                out = model(**inputs)
            probs = out.logits.float().sigmoid()  # [B, Q, T]
            n_tok = min(probs.shape[-1], len(token_phrase))
            phrase_scores = torch.full((*probs.shape[:2], len(labels)), 0.0)
            for p in range(len(labels)):
                cols = [t for t in range(n_tok) if token_phrase[t] == p]
                if cols:
                    phrase_scores[..., p] = probs[..., cols].amax(-1).cpu()
            score, label_idx = phrase_scores.max(-1)
            cx, cy, bw, bh = out.pred_boxes.float().cpu().unbind(-1)
            boxes = torch.stack([(cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h], -1)
            boxes[..., 0::2] = boxes[..., 0::2].clamp(0, w)
            boxes[..., 1::2] = boxes[..., 1::2].clamp(0, h)
            for b in range(len(chunk)):
                keep = torch.nonzero(score[b] >= self.box_threshold).flatten()
                if keep.numel():
                    keep = keep[batched_nms(boxes[b, keep], score[b, keep], label_idx[b, keep], self.nms_iou)]
                    keep = keep[: self.max_objects]
                results.append([(labels[int(label_idx[b, k])], float(score[b, k]), boxes[b, k].tolist())
                                for k in keep])
        return results

    def graph(self, clip: VideoClip, query: str = "", window=(None, None), n_frames: int = 8) -> dict:
        labels = query_nouns(query) or list(self.vocabulary)
        start, end = window_bounds(clip, window)
        frames, times, _ = sample_window(clip, n_frames, (start, end))
        detections = self._detect(frames, labels) if len(frames) else []
        h, w = frames.shape[1:3] if len(frames) else (0, 0)
        out_frames, next_id = [], 0
        per_label: dict[str, list[int]] = {label: [] for label in labels}
        for frame, t, dets in zip(frames, times, detections):
            objects = []
            for label, score, box in dets:
                x1, y1, x2, y2 = box
                mx, my = (x2 - x1) * 0.2, (y2 - y1) * 0.2  # inner box: less background in the colour vote
                crop = frame[int(y1 + my):max(int(y1 + my) + 1, int(y2 - my)), int(x1 + mx):max(int(x1 + mx) + 1, int(x2 - mx))]
                area = (x2 - x1) * (y2 - y1) / max(1.0, float(w * h))
                objects.append({"id": next_id, "label": label, "box": [round(v, 1) for v in box],
                                "score": round(score, 4), "color": color_name(crop),
                                "attributes": {"center": [round((x1 + x2) / 2, 1), round((y1 + y2) / 2, 1)],
                                               "area_frac": round(area, 4),
                                               "size": "large" if area > 0.25 else "medium" if area > 0.04 else "small"}})
                next_id += 1
            relations = [{"subject": a["id"], "predicate": box_relation(a["box"], b["box"]), "object": b["id"]}
                         for i, a in enumerate(objects) for b in objects[i + 1:]]
            for label in per_label:
                per_label[label].append(sum(o["label"] == label for o in objects))
            out_frames.append({"t": round(float(t), 3), "objects": objects, "relations": relations})
        counts = {k: int(round(float(np.median(v)))) for k, v in per_label.items() if v and max(v) > 0}
        return {"frames": out_frames, "counts": counts, "labels": labels,
                "window": [round(start, 3), round(end, 3)], "model": self.model_name}
