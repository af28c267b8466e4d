"""The video-visibility probe (task group ``mvx_probe``): does a model really see every video?

Each question shows 2-5 short videos, each with its own solid background colour (and a moving
square so it is a real video), and asks for the background colour of one named video; the
options are the colours of the question's videos. The asked position runs over every slot, so
a model (or adapter) that silently keeps only the first video answers the first video's colour:
right at position 1, wrong everywhere else. :func:`visibility_report` reads a run's records and
says so. Question ids carry the position (``prb-007-v3of4``) so the samples log stands alone.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

from .registry import get_task
from .schema import validate_sample, write_jsonl

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (210, 40, 40), "green": (40, 170, 60), "blue": (40, 70, 210), "yellow": (230, 210, 40),
    "purple": (140, 50, 170), "orange": (240, 140, 30), "white": (235, 235, 235), "black": (20, 20, 20),
}
_ID = re.compile(r"-v(\d+)of(\d+)$")


def _write_clip(path: Path, rgb: tuple[int, int, int], seed: int, n_frames: int = 8, size: int = 96) -> None:
    """A solid background with a square of the complementary colour moving across it."""
    from .synth.encode import encode_mp4

    rng = np.random.default_rng(seed)
    square = (255 - np.array(rgb)).clip(0, 255).astype(np.uint8)
    frames = np.empty((n_frames, size, size, 3), np.uint8)
    frames[:] = np.array(rgb, np.uint8)
    y = int(rng.integers(10, size - 30))
    for i in range(n_frames):
        x = 6 + i * (size - 30) // n_frames
        frames[i, y:y + 18, x:x + 18] = square
    encode_mp4(frames, path)


def generate_probe(out_dir: str | Path, *, n_videos: tuple[int, ...] = (2, 3, 4, 5), seed: int = 0,
                   clip_frames: int = 8) -> Path:
    """Write the probe set: for each video count n, one question per asked position 1..n. ``clip_frames``:
    frames per clip (the route check uses more than a config's budget, so an ignored budget shows)."""
    out = Path(out_dir)
    (out / "videos").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    names = list(COLOURS)
    samples, k = [], 0
    for n in n_videos:
        for pos in range(1, n + 1):
            colours = [names[i] for i in rng.permutation(len(names))[:n]]
            labels = [f"Video {i + 1}" for i in range(n)]
            sid = f"prb-{k:03d}-v{pos}of{n}"
            videos = []
            for i, (label, colour) in enumerate(zip(labels, colours)):
                rel = f"videos/{sid}_{i + 1}.mp4"
                _write_clip(out / rel, COLOURS[colour], seed=seed * 1000 + k * 10 + i, n_frames=clip_frames)
                videos.append({"label": label, "path": rel})
            # options: the asked colour plus distractors from the other videos first (dropping a video shows)
            others = [c for c in colours if c != colours[pos - 1]]
            extra = [c for c in names if c not in colours]
            opts = [colours[pos - 1]] + others[:3] + extra[: max(0, 3 - len(others))]
            order = rng.permutation(4)
            letters = "ABCD"
            options = {letters[j]: opts[order[j]].capitalize() for j in range(4)}
            answer = letters[int(np.where(order == 0)[0][0])]
            samples.append(validate_sample({
                "id": sid, "task": get_task("PRB").code,
                "question": f"What is the background colour of {labels[pos - 1]}?",
                "options": options, "answer": answer, "videos": videos,
                "meta": {"colours": colours, "asked": pos}}))
            k += 1
    write_jsonl(samples, out / "data.jsonl")
    return out


def ensure_probe(cache_dir: str | Path | None = None, seed: int = 0) -> Path:
    """The probe folder: ``MVX_PROBE_DATA`` if set, else generated once into a cache (atomically)."""
    env = os.environ.get("MVX_PROBE_DATA")
    if env:
        return Path(env)
    hf_home = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
    root = Path(cache_dir) if cache_dir else hf_home / "mvx_probe" / f"seed{seed}"
    if (root / "data.jsonl").is_file():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".probe-", dir=root.parent))
    try:
        generate_probe(tmp, seed=seed)
        try:
            tmp.rename(root)
        except OSError:  # another process finished first
            if not (root / "data.jsonl").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return root


def visibility_report(records: list[dict]) -> dict:
    """Accuracy by asked position and a verdict. ``records`` are the samples' ``mvx_acc`` dicts."""
    by_pos: dict[int, list[bool]] = defaultdict(list)
    for r in records:
        m = _ID.search(str(r["id"]))
        if m:
            by_pos[int(m.group(1))].append(bool(r["correct"]))
    acc = {p: 100.0 * sum(v) / len(v) for p, v in sorted(by_pos.items())}
    first = acc.get(1)
    later = [r for p, v in by_pos.items() if p > 1 for r in v]
    later_acc = 100.0 * sum(later) / len(later) if later else None
    chance = 100.0 * get_task("PRB").chance
    if first is None or later_acc is None:
        verdict = "inconclusive: the run has no questions about later videos"
    elif first >= 75 and later_acc <= chance + 15:
        verdict = "drops videos: it answers about the first video but not about later ones"
    elif later_acc >= 75:
        verdict = "sees every video"
    elif max(first, later_acc) <= chance + 15:
        verdict = "inconclusive: the model is near chance at every position (check its inputs)"
    else:
        verdict = "partial: accuracy falls for later videos"
    return {"accuracy_by_position": acc, "first": first, "later": later_acc, "verdict": verdict,
            "n": sum(len(v) for v in by_pos.values())}


def report_from_samples(samples_file: str | Path) -> dict:
    recs = [json.loads(x)["mvx_acc"] for x in Path(samples_file).read_text().splitlines() if x.strip()]
    return visibility_report(recs)
