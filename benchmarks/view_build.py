"""Time `mvx-bench view` on a run: building the static site (pages + filmstrip thumbnails).

    mvx-bench demo --out /tmp/demo_view              # the 220-question offline demo run (PER_TASK=20)
    python benchmarks/view_build.py /tmp/demo_view   # builds into a fresh temporary folder, twice

Prints the wall time of a cold build (new site folder, empty frame cache), of a build without
thumbnails, the number of pages and thumbnails, the site's size and the per-question cost.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path


def _size(folder: Path) -> tuple[int, int]:
    files = [f for f in folder.rglob("*") if f.is_file()]
    return len(files), sum(f.stat().st_size for f in files)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output_path", nargs="?", default="outputs/demo", help="the run (an lmms-eval --output_path)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args()

    from mvx_tasks.video_decoder import clear_cache
    from mvx_tasks.viewer.render import build_site

    out: dict = {"run": str(args.output_path), "cpus": os.cpu_count(), "machine": platform.machine(),
                 "workers": args.workers}
    with tempfile.TemporaryDirectory() as tmp:
        clear_cache()
        t0 = time.perf_counter()
        info = build_site(args.output_path, Path(tmp) / "site", workers=args.workers)
        out["full_s"] = round(time.perf_counter() - t0, 2)
        n_files, n_bytes = _size(Path(tmp) / "site")
        thumbs = list((Path(tmp) / "site" / "thumbs").rglob("*.jpg"))
        out.update(questions=info["questions"], thumbnails=info["thumbnails"], files=n_files,
                   site_mb=round(n_bytes / 2**20, 1),
                   thumb_kb_mean=round(sum(f.stat().st_size for f in thumbs) / max(1, len(thumbs)) / 1024, 1),
                   load_s=info["seconds_load"], run_list_pages_s=round(info["seconds_pages"] - info["seconds_load"], 2))
        out["ms_per_question"] = round(1000 * out["full_s"] / max(1, info["questions"]), 1)
        clear_cache()
        t0 = time.perf_counter()
        build_site(args.output_path, Path(tmp) / "site_nothumbs", workers=args.workers, thumbnails=False)
        out["no_thumbnails_s"] = round(time.perf_counter() - t0, 2)
    print(json.dumps(out, indent=1))
    print(f"\n{out['questions']} questions: {out['full_s']:.1f} s with {out['thumbnails']} thumbnails "
          f"({out['ms_per_question']:.0f} ms per question, site {out['site_mb']} MB), "
          f"{out['no_thumbnails_s']:.1f} s without thumbnails; {out['cpus']} CPUs, {args.workers} workers")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
