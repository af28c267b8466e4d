"""Re-encode a dataset folder's videos at another quality: the same frames under another codec noise.

Why: a model's answer should not depend on how a video happened to be compressed. ``mvx-bench
reencode SRC DST --crf 30`` writes a copy of a canonical dataset folder (``data.jsonl``, subtitles,
every other file) whose videos are decoded and encoded again with libx264 at the given CRF, frame
for frame, at each frame's own time. Two runs of any model (SAMA or a baseline) on SRC and on DST,
compared question by question (``benchmarks/compare_answers.py``), show how many answers the codec
moves; that is how users test a downloaded benchmark, where regenerating clean frames at another
quality (``python -m mvx_tasks.real_composite --crf``) is not possible.

- **Frames**: one decoded frame in memory at a time (a 10-minute HD video streams through); frames
  stored with rotation metadata are written upright (what :mod:`.video_decoder` gives models); an
  odd width or height is padded by one replicated pixel (yuv420p needs even sizes, no source pixel
  is dropped); each frame keeps its presentation time to the millisecond (variable frame rates too).
  Audio is not copied (no MVX tool or harness route reads it).
- **Deterministic**: one encoder thread, no B-frames: the same source and settings give the same bytes.
- **Crash-safe and resumable**: each video is written to ``<name>.part`` and renamed when complete;
  ``DST/reencode.json`` records the settings and every finished video after each one, so a killed
  run resumes where it stopped, a second run skips what is done, and a run with other settings
  into the same folder is refused (mixed qualities would make the comparison meaningless).
- **Bad input loses nothing**: a video that cannot be decoded is copied unchanged (the evaluation
  then records that question as failed with the decoder's reason, as on SRC) and listed as failed
  in the record with the reason; the other videos go on.
"""
from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ProcessPoolExecutor
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .data import DATA_FILE, load_local, resolve_in_root
from .video_index import VideoDecodeError, video_info

RECORD = "reencode.json"
DEFAULT_PRESET = "medium"  # libx264's own default: what `ffmpeg -c:v libx264 -crf N` gives a user
PRESETS = ("ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo")
_MS = Fraction(1, 1000)


class ReencodeError(ValueError):
    """A re-encode that cannot start: the folders or the settings; says what to change."""


def _even(frame: np.ndarray) -> np.ndarray:
    """The frame padded by one replicated pixel where its height or width is odd (yuv420p's 2x2 chroma)."""
    h, w = frame.shape[:2]
    if h % 2 == 0 and w % 2 == 0:
        return frame
    return np.pad(frame, ((0, h % 2), (0, w % 2), (0, 0)), mode="edge")


def reencode_video(src: str | os.PathLike, dst: str | os.PathLike, crf: int, preset: str = DEFAULT_PRESET) -> dict[str, Any]:
    """Decode ``src`` and write it to ``dst`` with libx264 (yuv420p) at ``crf``, streaming frame by
    frame, each at its own time (ms). Written to ``dst.part`` and renamed when complete. Returns
    {"frames", "width", "height", "fps", "padded", "rotated"}; raises :class:`VideoDecodeError`
    when ``src`` cannot be decoded (nothing is left at ``dst``)."""
    import av

    info = video_info(src)  # raises VideoDecodeError for what does not open or decode
    if info.problem:
        raise VideoDecodeError(info.problem)
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    part = dst.with_name(dst.name + ".part")
    k_rot = info.rotation // 90
    fps = Fraction(info.fps).limit_denominator(1001) if info.fps > 0 else Fraction(25)
    frames = padded = 0
    size: tuple[int, int] | None = None
    try:
        with av.open(str(src)) as source, av.open(str(part), "w", format="mp4") as out:
            stream_in = source.streams.video[0]
            stream = None
            first = None
            last_ms = -1
            for frame in source.decode(stream_in):
                arr = frame.to_ndarray(format="rgb24")
                if k_rot:
                    arr = np.ascontiguousarray(np.rot90(arr, -k_rot))
                even = _even(arr)
                padded = padded or even is not arr
                if stream is None:
                    stream = out.add_stream("libx264", rate=fps)
                    stream.width, stream.height = int(even.shape[1]), int(even.shape[0])
                    stream.pix_fmt = "yuv420p"
                    stream.time_base = _MS
                    stream.codec_context.time_base = _MS
                    stream.options = {"crf": str(int(crf)), "preset": preset, "threads": "1", "bframes": "0",
                                      "g": str(max(1, 2 * round(float(fps))))}
                    stream.codec_context.thread_count = 1
                    size = (stream.width, stream.height)
                elif (even.shape[1], even.shape[0]) != size:
                    raise VideoDecodeError(f"video file {src} changes its frame size mid-stream "
                                           f"({size[0]}x{size[1]} -> {even.shape[1]}x{even.shape[0]}); re-encode it "
                                           "to one size with ffmpeg first")
                t = float(frame.time) if frame.time is not None else frames / float(fps)
                first = t if first is None else first
                ms = max(round((t - first) * 1000), last_ms + 1)  # strictly increasing
                last_ms = ms
                vf = av.VideoFrame.from_ndarray(even, format="rgb24")
                vf.pts, vf.time_base = ms, _MS
                for packet in stream.encode(vf):
                    out.mux(packet)
                frames += 1
            if stream is None:
                raise VideoDecodeError(f"video file {src} decoded to no frames")
            for packet in stream.encode():
                out.mux(packet)
    except VideoDecodeError:
        part.unlink(missing_ok=True)
        raise
    except Exception as exc:  # noqa: BLE001 - damaged data mid-stream, an encoder refusal: this video only
        part.unlink(missing_ok=True)
        raise VideoDecodeError(f"video file {src} could not be re-encoded after {frames} frames "
                               f"({type(exc).__name__}: {str(exc)[:120]})") from None
    part.replace(dst)
    assert size is not None
    return {"frames": frames, "width": size[0], "height": size[1], "fps": round(float(fps), 3),
            "padded": bool(padded), "rotated": info.rotation}


def _job(args: tuple[str, str, int, str]) -> tuple[str, dict[str, Any]]:
    src, dst, crf, preset = args
    try:
        return "done", reencode_video(src, dst, crf, preset)
    except VideoDecodeError as exc:
        return "failed", {"reason": str(exc)}


def _stamp(path: Path) -> list[int] | None:
    """A source file's size and modification time (None when it is missing): a video replaced since is
    re-encoded again."""
    try:
        st = path.stat()
    except OSError:
        return None
    return [int(st.st_size), int(st.st_mtime_ns)]


def _write_record(path: Path, record: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)


def reencode_folder(src: str | os.PathLike, dst: str | os.PathLike, crf: int, preset: str = DEFAULT_PRESET,
                    workers: int = 1) -> dict[str, Any]:
    """Copy the dataset folder ``src`` to ``dst`` with every video re-encoded (see the module doc).
    Returns {"done": [...], "skipped": [...], "failed": {path: reason}, "record": path} (video paths
    relative to the folder)."""
    if preset not in PRESETS or not 0 <= int(crf) <= 51:
        raise ReencodeError(f"libx264 takes a CRF from 0 to 51 and a preset of {', '.join(PRESETS)}; got crf {crf}, "
                            f"preset {preset!r}")
    src_r, dst_p = Path(src).resolve(), Path(dst)
    if not (src_r / DATA_FILE).is_file():
        raise ReencodeError(f"{src_r} holds no {DATA_FILE}: give a dataset folder in the canonical layout "
                            f"(check one with `mvx-bench verify FOLDER`)")
    dst_p.mkdir(parents=True, exist_ok=True)
    dst_r = dst_p.resolve()
    if dst_r == src_r or src_r in dst_r.parents:
        raise ReencodeError(f"the output folder {dst_r} is the dataset folder or inside it; write the copy elsewhere")
    samples = load_local(src_r)  # validates every line and keeps every path inside the folder
    videos = sorted({v.path for s in samples for v in s.videos})
    for rel in videos:
        resolve_in_root(dst_r, rel, what="video")
    record_path = dst_r / RECORD
    settings = {"codec": "libx264", "crf": int(crf), "preset": str(preset)}
    record: dict[str, Any] = {"source": str(src_r), **settings, "videos": {}}
    if record_path.is_file():
        old = json.loads(record_path.read_text(encoding="utf-8"))
        if any(old.get(k) != v for k, v in settings.items()):
            raise ReencodeError(
                f"{dst_r} already holds videos re-encoded with crf {old.get('crf')}, preset {old.get('preset')}; this run "
                f"asks for crf {crf}, preset {preset}. Write to another folder, or delete {dst_r} to start over")
        record["videos"] = dict(old.get("videos") or {})
    # every file that is not a video the questions use is copied as it is (data.jsonl, subtitles, notes);
    # a link to a file outside the folder is not followed out of it
    wanted = set(videos)
    for path in sorted(src_r.rglob("*")):
        rel = path.relative_to(src_r).as_posix()
        inside = src_r in path.resolve().parents
        if path.is_file() and inside and rel not in wanted and not rel.endswith(".part") and rel != RECORD:
            target = dst_r / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    todo, skipped = [], []
    for rel in videos:
        prev = record["videos"].get(rel, {})
        if prev.get("status") == "done" and (dst_r / rel).is_file() and prev.get("source") == _stamp(src_r / rel):
            skipped.append(rel)
        else:
            todo.append(rel)
    done: list[str] = []
    failed: dict[str, str] = {}
    jobs = [(str(src_r / rel), str(dst_r / rel), int(crf), str(preset)) for rel in todo]

    def finish(rel: str, status: str, data: dict[str, Any]) -> None:
        if status == "failed":
            # the original stays in the copy (a missing one stays missing): the evaluation then fails this
            # question with the decoder's reason, as on the source folder
            if (src_r / rel).is_file():
                (dst_r / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src_r / rel, dst_r / rel)
            failed[rel] = data["reason"]
        else:
            done.append(rel)
        record["videos"][rel] = {"status": status, "source": _stamp(src_r / rel), **data}
        _write_record(record_path, record)

    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(min(workers, len(jobs))) as pool:
            for rel, (status, data) in zip(todo, pool.map(_job, jobs)):
                finish(rel, status, data)
    else:
        for rel, job in zip(todo, jobs):
            finish(rel, *_job(job))
    _write_record(record_path, record)
    return {"done": done, "skipped": skipped, "failed": failed, "record": str(record_path)}
