"""Small generated fixtures shared by tests: tiny videos and canonical dataset folders."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from mvx_tasks.registry import get_task


def write_video(path: str | Path, color=(200, 30, 30), n_frames: int = 8, size: int = 64, fps: int = 8,
                moving: bool = True) -> Path:
    """An H.264 MP4 of a coloured square (moving right when ``moving``) on a grey background."""
    import av

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as c:
        s = c.add_stream("libx264", rate=fps)
        s.width = s.height = size
        s.pix_fmt = "yuv420p"
        s.options = {"crf": "18", "preset": "veryfast"}
        for i in range(n_frames):
            a = np.full((size, size, 3), 90, np.uint8)
            x = (i * 4) % (size - 16) if moving else size // 3
            a[size // 3: size // 3 + 16, x: x + 16] = color
            for pkt in s.encode(av.VideoFrame.from_ndarray(a, format="rgb24")):
                c.mux(pkt)
        for pkt in s.encode():
            c.mux(pkt)
    return path


def sample_dict(sid: str, task: str, labels: list[str], answer: str = "A", options: dict | None = None,
                video_dir: str = "videos") -> dict:
    spec = get_task(task)
    n_opt = spec.n_options or 3
    letters = "ABCDEFGH"[:n_opt]
    options = options or {k: f"Video {k}" for k in letters}
    return {"id": sid, "task": task, "question": f"Which candidate matches the reference? ({sid})",
            "options": options, "answer": answer,
            "videos": [{"label": lb, "path": f"{video_dir}/{sid}_{i}.mp4"} for i, lb in enumerate(labels)],
            "meta": {"note": "fixture"}}


def make_dataset(root: str | Path, tasks=("CNT", "FD", "RID"), per_task: int = 2, video_frames: int = 8) -> Path:
    """A canonical folder with real (tiny) videos for the given tasks; answers cycle over letters."""
    root = Path(root)
    rows = []
    colors = [(220, 40, 40), (40, 200, 40), (40, 40, 220), (220, 220, 40), (200, 40, 200)]
    for code in tasks:
        spec = get_task(code)
        n_opt = spec.n_options or 3
        labels = ["Reference"] + [f"Video {c}" for c in "ABCD"] if n_opt == 4 else ["Video A", "Video B"]
        for i in range(per_task):
            sid = f"{code.lower()}-{i}"
            row = sample_dict(sid, code, labels, answer="ABCD"[i % n_opt])
            for j, v in enumerate(row["videos"]):
                write_video(root / v["path"], colors[j % len(colors)], n_frames=video_frames)
            rows.append(row)
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def add_subtitles(root: str | Path) -> Path:
    """Give every video of a canonical folder a two-cue ``.srt`` beside it (and in data.jsonl), so a
    subtitle tool has something to retrieve ("a red ball rolls", "a dog barks")."""
    root = Path(root)
    rows = [json.loads(x) for x in (root / "data.jsonl").read_text().splitlines()]
    for row in rows:
        for v in row["videos"]:
            srt = Path(v["path"]).with_suffix(".srt")
            (root / srt).write_text("1\n00:00:00,000 --> 00:00:01,000\na red ball rolls\n\n"
                                    "2\n00:00:01,000 --> 00:00:02,000\na dog barks\n", encoding="utf-8")
            v["subtitle"] = str(srt)
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


#: one call of each model-backed tool of the paper profile, on a two-video question (Video A, Video B)
SIX_TOOL_CALLS = [
    ("video_reader", {"video": "Video A", "query": "What is shown?", "n_frames": 2}),
    ("temporal_grounding", {"video": "Video A", "query": "a red square"}),
    ("scene_graph", {"video": "Video B", "query": "person", "n_frames": 2}),
    ("object_tracker", {"video": "Video B", "query": "person"}),
    ("visual_similarity", {"video_a": "Video A", "video_b": "Video B", "aspect": "content"}),
    ("subtitle_retriever", {"video": "Video A", "query": "red ball"}),
]
