"""Where codec noise enters the offline AM actor: seeding, or following and naming.

Two dataset folders hold the same questions encoded twice (the real-footage composite generated at
two CRFs, or any folder and its ``mvx-bench reencode`` copy). For every video of the chosen tasks the
motion-found actor (:func:`sama_model.backends.lite.movers.actor.choose_actor`) is found in both encodings,
and the actor taken in encoding A is also followed again in encoding B *from A's seed* (same sampled
frame, centre and radius; B's own camera maps). Reported, per video:

- the actor's motion names in A and in B, and whether they agree;
- whether the two encodings seeded the same follow (same sampled frame, centres within
  :data:`SEED_PX`);
- the names of A's seed followed in B: agreeing with A's names means following and naming held when
  only the pixels changed, so a disagreement between A and B came from the seeding; disagreeing
  means following or naming alone moved them;
- the median distance between A's follow and that same-seed follow in B (input pixels, over the
  sampled frames both kept);
- how much B's decoded frames differ from A's (mean absolute change, grey levels);
- with ``data.jsonl`` metadata naming the generator's actions (the real-footage composite's AM:
  ``reference_action`` and ``actions``), whether each encoding's names contain the true one
  (scoring only: the actor finder never sees it).

Why: on 2026-12-03 every actor-choice and naming variant tried moved the share of videos whose names
agree across CRF 20 and 30 by a few videos of 200; this says which layer a change has to steady.

    python benchmarks/actor_stability.py SET_CRF20 SET_CRF30 [--tasks AM] [--workers 2] [--json OUT]

With ``--pixel-noise N`` and one folder, encoding B is A's own decoded frames plus deterministic ±N
grey-level noise (:mod:`pixel_noise`, below any codec's change): what moves then is moved by any
change of the input at all, not by the codec.

    python benchmarks/actor_stability.py SET --pixel-noise 1 [--workers 2]
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SEED_PX = 3.0  # seed centres closer than this (input pixels), in the same sampled frame, are the same seed


def _actor(path: str, pixel_noise: int = 0) -> tuple[Any, Any, Any]:
    """(clip, movers, chosen follow or None) of one video: what ``motion_actor`` follows; with
    ``pixel_noise``, in the decoded frames plus ±N grey-level noise (:func:`pixel_noise.noisy`)."""
    from pixel_noise import noisy

    from mvx_tasks.video_decoder import load_video
    from sama_model.backends.lite.movers.actor import actor_follow

    clip = load_video(path)
    if pixel_noise:
        clip = dataclasses.replace(clip, frames=noisy(clip.frames, pixel_noise, path, range(clip.n_frames)))
    return (clip, *actor_follow(clip))


def compare_video(path_a: str, path_b: str, pixel_noise: int = 0) -> dict[str, Any]:
    """One video's actor in two encodings (see the module docstring), or, with ``pixel_noise``, in
    ``path_b``'s frames plus that noise; "error" when a video does not decode, so one broken file does
    not stop the comparison."""
    from mvx_tasks.video_decoder import VideoDecodeError
    from sama_model.backends.lite.movers.actor_following import following
    from sama_model.backends.lite.movers.actor_motion import followed_object

    try:
        clip_a, _, ca = _actor(path_a)
        clip_b, m_b, cb = _actor(path_b, pixel_noise)
    except (VideoDecodeError, OSError) as exc:  # a damaged or missing video: recorded, the others go on
        return {"error": f"{type(exc).__name__}: {exc}"}
    names_a = sorted(followed_object(ca.follow)["patterns"]) if ca else None
    names_b = sorted(followed_object(cb.follow)["patterns"]) if cb else None
    same_size = clip_a.frames.shape == clip_b.frames.shape
    change = float(np.abs(clip_a.frames.astype(np.int16) - clip_b.frames.astype(np.int16)).mean()) if same_size else None
    out: dict[str, Any] = {"names_a": names_a, "names_b": names_b, "same_names": names_a == names_b,
                           "same_seed": None, "names_b_from_seed_a": None, "path_px": None,
                           "pixel_change": None if change is None else round(change, 3)}
    if ca is None or cb is None:
        return out
    (ka, pa, _), (kb, pb, _) = ca.seed, cb.seed
    out["same_seed"] = bool(ka == kb and float(np.linalg.norm(np.asarray(pa) - np.asarray(pb))) < SEED_PX)
    if ka < len(m_b.idx):  # (the same sampling: the same frames; a shorter decode may lack A's seed frame)
        again = following(clip_b, m_b, *ca.seed)
        assert again is not None  # (no texture floor)
        out["names_b_from_seed_a"] = sorted(followed_object(again)["patterns"])
        both = sorted(set(ca.follow.steps) & set(again.steps))
        if both:
            pa_at = {k: p for k, p in zip(ca.follow.steps, ca.follow.pos)}
            pb_at = {k: p for k, p in zip(again.steps, again.pos)}
            out["path_px"] = round(float(np.median([np.linalg.norm(pa_at[k] - pb_at[k]) for k in both])), 2)
    return out


def _videos(folder: Path, tasks: set[str] | None) -> list[tuple[str, str, str, str | None]]:
    """(question id, video label, relative path, generator action or None) for every video of the tasks."""
    from mvx_tasks.synth.sprites import MOTION_PATTERNS

    rows = []
    for line in (folder / "data.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        if tasks and str(q.get("task", "")).upper() not in tasks:
            continue
        meta = q.get("meta") or {}
        acts = {"Reference": meta.get("reference_action"), **(meta.get("actions") or {})}
        for v in q["videos"]:
            act = acts.get(v["label"])
            rows.append((q["id"], v["label"], v["path"], MOTION_PATTERNS.get(act) if act else None))
    return rows


def compare_folders(a: str, b: str, tasks: set[str] | None = None, workers: int = 1,
                    pixel_noise: int = 0) -> dict[str, Any]:
    """Every video of ``tasks`` (all when None) compared between folders ``a`` and ``b`` (``b``'s frames
    plus ±``pixel_noise`` grey levels when given): per-video rows and the totals. Paths stay inside each
    folder (``resolve_in_root``)."""
    from mvx_tasks.data import resolve_in_root

    rows = _videos(Path(a), tasks)
    pairs = [(str(resolve_in_root(a, p, sample_id=q, what="video")), str(resolve_in_root(b, p, sample_id=q, what="video")))
             for q, _, p, _ in rows]
    compare = functools.partial(compare_video, pixel_noise=pixel_noise)
    if workers > 1:
        with ProcessPoolExecutor(workers) as ex:
            found = list(ex.map(compare, *zip(*pairs), chunksize=4)) if pairs else []
    else:
        found = [compare(x, y) for x, y in pairs]
    videos = []
    for (qid, label, path, truth), r in zip(rows, found):
        r = {"question": qid, "label": label, "path": path, **r}
        if truth and "error" not in r:
            r["right_a"] = bool(r["names_a"] and truth in r["names_a"])
            r["right_b"] = bool(r["names_b"] and truth in r["names_b"])
        videos.append(r)
    ok = [v for v in videos if "error" not in v]
    both = [v for v in ok if v["same_seed"] is not None]
    again = [v for v in both if v["names_b_from_seed_a"] is not None]
    paths = [v["path_px"] for v in again if v["path_px"] is not None]
    changes = [v["pixel_change"] for v in ok if v["pixel_change"] is not None]
    totals = {
        "videos": len(videos), "failed": len(videos) - len(ok),
        "pixel_change_mean": round(float(np.mean(changes)), 3) if changes else None,
        "same_names": sum(v["same_names"] for v in ok),
        "actor_in_both": len(both),
        "same_seed": sum(v["same_seed"] for v in both),
        "seed_a_followed_in_b": len(again),
        "same_names_from_seed_a": sum(v["names_b_from_seed_a"] == v["names_a"] for v in again),
        "path_px_median": round(float(np.median(paths)), 2) if paths else None,
        "path_px_over_5": sum(p > 5 for p in paths),
    }
    scored = [v for v in ok if "right_a" in v]
    if scored:
        totals.update(scored=len(scored), right_a=sum(v["right_a"] for v in scored),
                      right_b=sum(v["right_b"] for v in scored))
    return {"a": a, "b": b, "pixel_noise": pixel_noise, "totals": totals, "videos": videos}


def report(res: dict[str, Any]) -> str:
    """Markdown: the totals, then the videos whose names moved."""
    t = res["totals"]
    b = f"{res['b']} + ±{res['pixel_noise']} grey-level noise" if res.get("pixel_noise") else res["b"]
    lines = [f"Actor stability: {res['a']} vs {b}", "", "| measure | videos |", "|---|---:|",
             f"| compared | {t['videos']} ({t['failed']} failed to decode) |",
             f"| mean absolute pixel change, B vs A (grey levels) | {t.get('pixel_change_mean')} |",
             f"| same actor names in both encodings | {t['same_names']} |",
             f"| actor found in both | {t['actor_in_both']} |",
             f"| same seed (sampled frame, centre within {SEED_PX:g} px) | {t['same_seed']} |",
             f"| A's seed followed in B gives A's names | {t['same_names_from_seed_a']} of {t['seed_a_followed_in_b']} |",
             (f"| that follow's median distance from A's, over 5 px | {t['path_px_over_5']} "
              f"(median {t['path_px_median']} px) |")]
    if "scored" in t:
        lines.append(f"| true action named, A / B | {t['right_a']} / {t['right_b']} of {t['scored']} |")
    moved = [v for v in res["videos"] if "error" not in v and not v["same_names"]]
    if moved:
        lines += ["", "| question | video | A | B | B from A's seed | same seed | path px |", "|---|---|---|---|---|---|---:|"]
        for v in moved:
            lines.append(f"| {v['question']} | {v['label']} | {v['names_a']} | {v['names_b']} | "
                         f"{v['names_b_from_seed_a']} | {v['same_seed']} | {v['path_px']} |")
    for v in res["videos"]:
        if "error" in v:
            lines.append(f"- {v['question']} {v['label']} ({v['path']}): {v['error']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", help="dataset folder, one encoding (data.jsonl + videos)")
    ap.add_argument("b", nargs="?", help="the same questions in another encoding (default: a, with --pixel-noise)")
    ap.add_argument("--tasks", default="AM", help="comma-separated task codes; 'all' for every question")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", help="write the per-video rows and totals here")
    ap.add_argument("--pixel-noise", type=int, default=0, metavar="N",
                    help="encoding B gets deterministic +-N grey-level noise on its decoded frames")
    args = ap.parse_args(argv)
    if args.b is None:
        if not args.pixel_noise:
            ap.error("give two dataset folders, or one with --pixel-noise N")
        args.b = args.a
    for folder in (args.a, args.b):
        if not (Path(folder) / "data.jsonl").is_file():
            raise SystemExit(f"actor_stability: {folder}/data.jsonl not found; give two dataset folders "
                             "(e.g. `python -m mvx_tasks.real_composite OUT --seed S [--crf 30]`)")
    tasks = None if args.tasks.lower() == "all" else {t.strip().upper() for t in args.tasks.split(",") if t.strip()}
    res = compare_folders(args.a, args.b, tasks, args.workers, args.pixel_noise)
    print(report(res))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
