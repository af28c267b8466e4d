"""Decoder benchmark: today's code vs the new decoder vs the decode-only floor, per clip and decoder.

Generates (into a temp folder, never committed) a 30 s 1080p clip, a 10-minute 720p clip and a
10 s 4K clip (H.264, 30 fps, 2-second GOP; long clips are an encoded segment repeated by
remuxing, so generating them takes seconds, decoding them is real work), then measures each row
in a fresh subprocess so that peak RSS is that row's:

* ``today``: the decoder as it was before the bounded-memory rewrite, a frozen copy loaded from
  git (``--old-rev``, default the commit that last had it) into a temp module: load 256 uniform
  frames, resize to 448 on the longer side;
* ``new``: ``mvx_tasks.video_decoder.load_video`` with the default sampling policy;
* ``floor``: the same file decoded with no frame kept (decord ``skip_frames``, PyAV decode loop).

Columns: wall seconds, peak RSS (MB), RSS after imports (MB), MB of frames kept, peak minus kept,
and the wall-time ratio to the floor. Peak RSS is VmHWM, reset after the imports (so RSS after imports
plus what the decode itself grew; the import-time transient does not count). The floor is PyAV's
decode loop; decord's ``skip_frames`` row is shown for reference but does not fully decode (it
takes a fraction of a second of CPU for 900 HD frames), so ratios use the PyAV floor. Rows of today's PyAV path that would hold more than ``--max-gb`` of
full-resolution frames are skipped with the estimate (they would take the machine down).

    python benchmarks/decode.py                 # all clips, both decoders, prints a Markdown table
    python benchmarks/decode.py --clips hd30 --out results/decode_benchmark.md
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CLIPS = {  # name: (width, height, seconds, fps, encoded segment seconds)
    "hd30": (1920, 1080, 30, 30, 10),
    "long720": (1280, 720, 600, 30, 20),
    "uhd10": (3840, 2160, 10, 30, 2),
}
OLD_REV = "e61c9d2"  # last commit with the decoder that decoded at full resolution


def repeat_clip(src: Path, dst: Path, times: int) -> Path:
    """Remux ``src`` ``times`` times back to back (packets copied, timestamps shifted)."""
    import av

    with av.open(str(src)) as inp, av.open(str(dst), "w") as out:
        ist = inp.streams.video[0]
        ost = out.add_stream_from_template(ist)
        packets = [p for p in inp.demux(ist) if p.size]
        span = max(p.pts for p in packets) - min(p.pts for p in packets) + (packets[1].pts - packets[0].pts
                                                                               if len(packets) > 1 else 1)
        for k in range(times):
            for p in packets:
                q = av.Packet(bytes(p))
                q.pts, q.dts = p.pts + k * span, (p.dts if p.dts is not None else p.pts) + k * span
                q.is_keyframe = p.is_keyframe
                q.time_base, q.stream = p.time_base, ost
                out.mux(q)
    return dst


def make_clips(folder: Path, names: list[str]) -> dict[str, Path]:
    from mvx_tasks.clipgen import make_clip

    out = {}
    for name in names:
        w, h, seconds, fps, seg = CLIPS[name]
        path = folder / f"{name}.mp4"
        if not path.is_file():
            t0 = time.perf_counter()
            part = make_clip(folder / f"{name}.seg.mp4", w, h, seg, fps, gop=2 * fps, preset="ultrafast", crf=23)
            repeat_clip(part, path, int(round(seconds / seg)))
            part.unlink()
            print(f"generated {path.name} ({w}x{h}, {seconds} s) in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        out[name] = path
    return out


# ----------------------------------------------------------------------------- child: one row

def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> None:
    """Reset the peak-RSS mark (VmHWM) to the current RSS, so imports' transient peaks do not count."""
    Path("/proc/self/clear_refs").write_text("5")


def _old_module(rev: str):
    import importlib.util

    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:mvx_tasks/video.py"], capture_output=True,
                         text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "video_today.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("video_today", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["video_today"] = mod
    spec.loader.exec_module(mod)
    return mod


def child(mode: str, decoder: str, path: str, rev: str) -> dict:
    import av
    import cv2  # noqa: F401
    import decord
    import numpy as np  # noqa: F401

    old = _old_module(rev) if mode == "today" else None
    import resource

    from mvx_tasks import video_decoder as video

    base = _status_mb("VmRSS")
    _reset_peak()
    u0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    kept = 0
    if mode == "today":
        fn = old._decode_decord if decoder == "decord" else old._decode_av
        frames, *_ = fn(path, 256)
        frames = old._resize(frames, old.DEFAULT_MAX_SIDE)
        kept, n = frames.nbytes, len(frames)
    elif mode == "new":
        clip = video.load_video(path, decoder=decoder)
        kept, n = clip.nbytes, clip.n_frames
    else:  # floor: decode every frame, keep none
        if decoder == "decord":
            vr = decord.VideoReader(path, num_threads=1)
            n = len(vr)
            vr.skip_frames(n)
        else:
            with av.open(path) as c:
                n = sum(1 for _ in c.decode(c.streams.video[0]))
    wall = time.perf_counter() - t0
    u1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)
    return {"wall": wall, "cpu": cpu, "peak": _status_mb("VmHWM"), "base": base, "kept": kept / 2 ** 20, "n": n}


# ----------------------------------------------------------------------------- parent

def run_row(mode: str, decoder: str, path: Path, rev: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--_child", json.dumps([mode, decoder, str(path), rev])],
                          capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("@@ROW@@"):
            return json.loads(line[7:])
    return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:120]}


def table(rows: list[dict]) -> str:
    head = ("| clip | decoder | code | frames kept | wall s | CPU s | peak RSS MB | RSS after imports MB | MB kept | "
            "peak - kept MB | decode overhead MB (peak - imports - kept) | wall / floor |")
    lines = [head, "|---" * 12 + "|"]
    floors = {r["clip"]: r.get("wall") for r in rows if r["mode"] == "floor" and r["decoder"] == "av"}
    for r in rows:
        if "error" in r or "skipped" in r:
            lines.append(f"| {r['clip']} | {r['decoder']} | {r['mode']} | | | | | | | | | {r.get('skipped') or r['error']} |")
            continue
        fl = floors.get(r["clip"])
        ratio = f"{r['wall'] / fl:.2f}" if fl and r["mode"] != "floor" else ""
        kept = f"{r['n']}" if r["mode"] != "floor" else f"0 (of {r['n']})"
        lines.append(f"| {r['clip']} | {r['decoder']} | {r['mode']} | {kept} | {r['wall']:.1f} | {r.get('cpu', 0):.1f} | {r['peak']:.0f} | "
                     f"{r['base']:.0f} | {r['kept']:.0f} | {r['peak'] - r['kept']:.0f} | "
                     f"{r['peak'] - r['base'] - r['kept']:.0f} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clips", default=",".join(CLIPS), help=f"comma-separated from {', '.join(CLIPS)}")
    ap.add_argument("--decoders", default="decord,av")
    ap.add_argument("--modes", default="today,new,floor")
    ap.add_argument("--dir", help="where to generate the clips (default: a folder in the temp dir)")
    ap.add_argument("--old-rev", default=OLD_REV, help="git revision holding today's mvx_tasks/video.py")
    ap.add_argument("--max-gb", type=float, default=8.0, help="skip today's PyAV rows above this estimate")
    ap.add_argument("--out", help="also write the table (Markdown) here")
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._child:
        print("@@ROW@@" + json.dumps(child(*json.loads(args._child))))
        return 0
    folder = Path(args.dir or Path(tempfile.gettempdir()) / "mvx_decode_bench")
    folder.mkdir(parents=True, exist_ok=True)
    clips = make_clips(folder, args.clips.split(","))
    rows = []
    for name, path in clips.items():
        w, h, seconds, fps, _ = CLIPS[name]
        for decoder in args.decoders.split(","):
            for mode in args.modes.split(","):
                row = {"clip": f"{name} ({w}x{h}, {seconds} s)", "decoder": decoder, "mode": mode}
                full_gb = w * h * 3 * seconds * fps / 2 ** 30
                if mode == "today" and decoder == "av" and full_gb > args.max_gb:
                    row["skipped"] = f"not run: holds every frame at full size, {full_gb:.0f} GB"
                else:
                    row.update(run_row(mode, decoder, path, args.old_rev))
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    text = table(rows)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
