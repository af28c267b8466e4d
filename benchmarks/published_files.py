"""Published peer files read whole: CVBench's own annotation file (all 1,000 rows) and save_to_disk folder.

The files are not committed (datasets never are): they are fetched once into a developer cache,
``$MVX_PUBLISHED_CACHE`` (default ``~/.cache/mvx_published``), at the commit pinned below, laid out as
the authors ship them (``cvbench/Video-R1/src/r1-v/Evaluation/CVBench.json`` with the videos in
``Evaluation/CVBench/<group>/<file>``; ``cvbench/mvr_dataset/``). Then, one row per check:

* ``load``: ``load_benchmark`` on the Evaluation folder: rows, questions, repaired and skipped ids, the
  files not read (the authors' ``example.json`` beside it), per-task counts against the release's own
  (counted from the raw JSON here) and against the record's published counts, chance on the questions;
* ``save_to_disk``: the authors' ``mvr_dataset/`` (their lmms-eval fork's copy, 27 rows) through the same
  loader, its ids against their ``example.json``;
* ``verify``: ``mvx-bench verify --benchmark cvbench`` on the Evaluation folder (every video present);
* ``lmms-eval``: ``lmms-eval --tasks cvbench_mv --limit N`` (SAMA, offline profile) on the Evaluation
  folder, with a tiny generated video at every path the file names: questions run per task, failures,
  the results file's ``mvx_data_notes`` and ``mvx_chance``.

Fill the cache once, from a clone of the authors' repository or from GitHub:

    git clone https://github.com/Hokhim2/CVBench /tmp/CVBench
    python benchmarks/published_files.py --fill-from /tmp/CVBench      # or: --download
    python benchmarks/published_files.py [--limit 1] [--out results/published_files.csv]
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mvx_tasks.benchmarks import CVBENCH  # noqa: E402
from mvx_tasks.data_peers import load_benchmark_report  # noqa: E402
from mvx_tasks.metrics import question_chance  # noqa: E402

REPO = "Hokhim2/CVBench"
COMMIT = "f8dc8f752fb8e7a3a05ac90e9ff9b3a9e90d79ed"
EVAL = "Video-R1/src/r1-v/Evaluation"
FILES = (f"{EVAL}/CVBench.json", f"{EVAL}/example.json", "mvr_dataset/dataset_dict.json",
         "mvr_dataset/test/dataset_info.json", "mvr_dataset/test/state.json",
         "mvr_dataset/test/data-00000-of-00001.arrow")
CACHE_ENV = "MVX_PUBLISHED_CACHE"


def cache_dir(arg: str | None) -> Path:
    return Path(arg or os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "mvx_published").expanduser()


def fill(cache: Path, source: str | None, download: bool) -> None:
    """Copy the pinned files into ``cache/cvbench/`` from a git clone (bare or not) or from GitHub."""
    for rel in FILES:
        dest = cache / "cvbench" / rel
        if dest.is_file():
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source:
            data = subprocess.run(["git", "-C", source, "show", f"{COMMIT}:{rel}"], check=True,
                                  capture_output=True).stdout
        elif download:
            with urllib.request.urlopen(f"https://raw.githubusercontent.com/{REPO}/{COMMIT}/{rel}", timeout=60) as r:
                data = r.read()
        else:
            raise SystemExit(f"{dest} is not in the cache. Fill it once: --fill-from <clone of github.com/{REPO}> "
                             f"or --download (see this script's docstring)")
        dest.write_bytes(data)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tiny_videos(folder: Path, paths: list[str], proto_dir: Path) -> None:
    """One tiny H.264 clip per colour, copied to every path the file names (content is irrelevant here)."""
    import av
    import numpy as np

    proto = []
    for k, colour in enumerate([(200, 40, 40), (40, 160, 40), (40, 60, 200), (200, 200, 40)]):
        p = proto_dir / f"proto{k}.mp4"
        if not p.is_file():
            p.parent.mkdir(parents=True, exist_ok=True)
            with av.open(str(p), "w") as c:
                s = c.add_stream("libx264", rate=8)
                s.width = s.height = 32
                s.pix_fmt = "yuv420p"
                for i in range(4):
                    a = np.full((32, 32, 3), 90, np.uint8)
                    a[8:20, (i * 3) % 16:(i * 3) % 16 + 12] = colour
                    for pkt in s.encode(av.VideoFrame.from_ndarray(a, format="rgb24")):
                        c.mux(pkt)
                for pkt in s.encode():
                    c.mux(pkt)
        proto.append(p)
    for i, rel in enumerate(paths):
        dest = folder / "CVBench" / rel
        if not dest.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(proto[i % len(proto)], dest)


def release_counts(rows: list[dict]) -> dict[str, int]:
    """Per-task counts of the raw file, by the authors' task_type names (not through the loader)."""
    by_name = {t.name: t.code for t in CVBENCH.tasks}
    return {by_name[k]: n for k, n in Counter(r["task_type"] for r in rows).items()}


def row(check: str, path: Path, **kw) -> dict:
    base = {"check": check, "file": str(path), "sha256": sha256(path)[:16] if path.is_file() else "",
            "rows": "", "questions": "", "repaired": "", "skipped": "", "counts_match": "", "detail": "", "seconds": ""}
    return {**base, **kw}


def check_load(ev: Path) -> dict:
    raw = json.loads((ev / "CVBench.json").read_text(encoding="utf-8"))
    t = time.perf_counter()
    samples, rep = load_benchmark_report(CVBENCH, ev)
    secs = time.perf_counter() - t
    counts = Counter(s.task for s in samples)
    match_release = dict(counts) == release_counts(raw)
    match_record = dict(counts) == CVBENCH.published_counts()
    chance = 100 * sum(question_chance(s.options) for s in samples) / len(samples)
    return row("load", ev / "CVBench.json", rows=rep.rows, questions=len(samples),
               repaired=" ".join(n.id for n in rep.repairs) or "none", skipped=" ".join(n.id or "?" for n in rep.skips) or "none",
               counts_match=f"release {match_release}, record {match_record}",
               detail=f"not read: {', '.join(rep.not_read) or 'none'}; chance {chance:.2f}%; "
                      f"video notes {len(rep.videos)}; count warnings {len(rep.count_warnings)}",
               seconds=f"{secs:.2f}")


def check_save_to_disk(repo: Path, ev: Path) -> dict:
    t = time.perf_counter()
    samples, rep = load_benchmark_report(CVBENCH, repo / "mvr_dataset")
    secs = time.perf_counter() - t
    example = json.loads((ev / "example.json").read_text(encoding="utf-8"))
    same = [s.id for s in samples] == [str(r["id"]) for r in example]
    return row("save_to_disk", repo / "mvr_dataset" / "test" / "data-00000-of-00001.arrow", rows=rep.rows,
               questions=len(samples), repaired=" ".join(n.id for n in rep.repairs) or "none",
               skipped=" ".join(n.id or "?" for n in rep.skips) or "none",
               counts_match=f"ids equal example.json's: {same}", detail=f"read {', '.join(rep.files)}",
               seconds=f"{secs:.2f}")


def check_verify(ev: Path) -> dict:
    from mvx_tasks.data_verify import verify

    t = time.perf_counter()
    rep = verify(ev, benchmark="cvbench")
    secs = time.perf_counter() - t
    return row("verify", ev / "CVBench.json", questions=sum(rep.counts.values()),
               repaired=" ".join(n.id for n in rep.load.repairs) if rep.load else "",
               skipped=" ".join(n.id or "?" for n in rep.load.skips) or "none" if rep.load else "",
               counts_match=f"{len(rep.warnings)} warnings",
               detail=f"{'OK' if rep.ok else 'FAILED: ' + '; '.join(rep.errors)[:300]}; videos checked {rep.n_videos}",
               seconds=f"{secs:.2f}")


def check_lmms_eval(ev: Path, limit: int, out: Path) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CVBENCH_DATA": str(ev), "TOKENIZERS_PARALLELISM": "false"}
    cmd = [sys.executable, "-m", "lmms_eval", "--model", "sama", "--model_args", "profile=offline",
           "--tasks", "cvbench_mv", "--batch_size", "1", "--limit", str(limit), "--output_path", str(out),
           "--log_samples"]
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    secs = time.perf_counter() - t
    found = sorted(out.rglob("*_results.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        return row("lmms-eval", ev / "CVBench.json", detail=f"no results file (exit {proc.returncode}): "
                   f"{(proc.stdout + proc.stderr)[-300:]}", seconds=f"{secs:.0f}")
    res = json.loads(found[-1].read_text())
    tasks = {CVBENCH.task_name(t.code): t.code for t in CVBENCH.tasks}
    per = {tasks[k]: v for k, v in res["results"].items() if k in tasks}
    n = sum(int(res["n-samples"][k]["effective"]) for k in tasks if k in res["n-samples"])
    failed = sum(int(v.get("mvx_failed,none", 0)) for v in per.values())
    notes = {c: v.get("mvx_data_notes,none") for c, v in per.items() if not str(v.get("mvx_data_notes,none")).startswith("repaired 0, skipped 0")}
    group = res.get("groups", {}).get("cvbench_mv", {}).get("mvx_acc,none")
    chance = sum(float(v.get("mvx_chance,none", 0)) for v in per.values()) / max(len(per), 1)
    return row("lmms-eval", Path(""), questions=n, repaired="; ".join(f"{c}: {x}" for c, x in notes.items()) or "none",
               counts_match=f"{len(per)} of 15 tasks ran, --limit {limit}",
               detail=f"failed {failed}; cvbench_mv group mvx_acc {group}; mean task chance {chance:.1f}%",
               seconds=f"{secs:.0f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=None, help=f"the developer cache (default ${CACHE_ENV} or ~/.cache/mvx_published)")
    ap.add_argument("--fill-from", default=None, help=f"a clone of github.com/{REPO} (bare or not) to copy the files from")
    ap.add_argument("--download", action="store_true", help="fetch the pinned files from raw.githubusercontent.com")
    ap.add_argument("--limit", type=int, default=1, help="questions per task through lmms-eval (0: skip that check)")
    ap.add_argument("--out", default="results/published_files.csv")
    args = ap.parse_args(argv)
    cache = cache_dir(args.cache)
    fill(cache, args.fill_from, args.download)
    repo = cache / "cvbench"
    ev = repo / EVAL
    raw = json.loads((ev / "CVBench.json").read_text(encoding="utf-8"))
    tiny_videos(ev, sorted({r[f"video_{i}"] for r in raw for i in range(1, 5) if r[f"video_{i}"]}), cache / "tiny_videos")
    rows = [check_load(ev), check_save_to_disk(repo, ev), check_verify(ev)]
    if args.limit:  # the run stays in the cache: `mvx-bench summary` and `mvx-bench view` can read it
        run = cache / "lmms_eval_cvbench"
        shutil.rmtree(run, ignore_errors=True)
        rows.append(check_lmms_eval(ev, args.limit, run))
    for r in rows:
        r["file"] = r["file"].replace(str(cache), "$MVX_PUBLISHED_CACHE") if r["check"] != "lmms-eval" \
            else "$MVX_PUBLISHED_CACHE/lmms_eval_cvbench"
        print(" | ".join(f"{k}={v}" for k, v in r.items() if v != ""))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
