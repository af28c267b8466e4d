"""How steady must a count be for CNT's answers to survive re-encoding? The answers' expected change when
each video's count moves by one with probability p, replayed from measured counts.

Issue 19 bounds the answers that re-encoding changes; re-encoding changes an answer through the counts of
its five videos. This turns a count-level target into the answer-level figure: for every CNT question of a
``count_stability.py --json`` file it takes the counts that tool measured and, for each rate p, gives the
expected share of answers that change when each video's count independently stays (1 - p) or moves one up
or down (p / 2 each; a count of 0 moves only up, with p), its graded count moving by the same step (as the
policy's :func:`~sama_model.skills.multi_video_comparison.cnt.one_off_changes` moves it) and its followed
objects gaining a sure one or losing the most probable (what the policy's match probability reads). Exact, not
sampled: every one of a question's 3^5 patterns is weighed by its probability and answered by the
policy's own rule (``count_stability.answers``). Beside it, the rate the re-encoding really moved and the
answers it really changed, when the file compared two encodings.

    python benchmarks/count_bound.py COUNTS.json [COUNTS.json ...] [--rates 0.2 0.1 0.05 0.02] [--json OUT]

The question texts come from each encoding's ``data.jsonl`` (the folder the file names); the videos are
not read again.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import count_stability  # noqa: E402

RATES = (0.2, 0.1, 0.05, 0.02)


def steps(count: int, p: float) -> list[tuple[int, float]]:
    """(step, probability) of one video's count under a one-off move at rate ``p``."""
    if p <= 0:
        return [(0, 1.0)]
    if count <= 0:
        return [(0, 1.0 - p), (1, p)]
    return [(0, 1.0 - p), (1, p / 2), (-1, p / 2)]


def moved(got: dict, step: int) -> dict:
    """A video's reading with its count (and graded count) moved by ``step``; its followed objects'
    ``probabilities`` (what the policy's match probability reads) gain a sure object (step 1) or lose their
    most probable one (step -1)."""
    if step == 0:
        return got
    out = dict(got, count=got["count"] + step)
    if "graded" in got:
        out["graded"] = float(got["graded"]) + step
    if "probabilities" in got:
        probs = sorted((float(p) for p in got["probabilities"]), reverse=True)
        out["probabilities"] = [1.0, *probs] if step > 0 else probs[1:]
    return out


def expected_changes(question: dict, rows: list[tuple], got: list[dict], p: float) -> float:
    """Probability that the question's answer changes when each of its videos' counts moves one off at
    rate ``p`` (``rows`` and ``got`` are the question's videos, as ``count_stability`` lists them)."""
    base = count_stability.answers([question], rows, got)[question["id"]]
    total = 0.0
    for pattern in itertools.product(*(steps(int(g["count"]), p) for g in got)):
        weight = 1.0
        for _, w in pattern:
            weight *= w
        if weight == 0.0:
            continue
        new = [moved(g, s) for g, (s, _) in zip(got, pattern)]
        total += weight * (count_stability.answers([question], rows, new)[question["id"]] != base)
    return total


def bound(path: Path, rates: tuple[float, ...] = RATES) -> dict:
    """The expected answers changed at each rate for every encoding of one ``count_stability --json`` file,
    and the measured move rate and answers changed where it compared two encodings."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out: dict = {"file": str(path), "encodings": {}}
    for folder, videos in data["videos"].items():
        questions = count_stability._questions(Path(folder))
        rows = count_stability._rows(Path(folder), questions)
        got = {(v["question"], v["video"]): v["got"] for v in videos}
        if any(not isinstance(got.get(r[:2]), dict) for r in rows):
            raise SystemExit(f"{path}: a video of {folder} failed or is missing; count it again with count_stability.py")
        own = {q["id"]: [r for r in rows if r[0] == q["id"]] for q in questions}  # each question's videos, once
        per_rate = {}
        for p in rates:
            changes = [expected_changes(q, own[q["id"]], [got[r[:2]] for r in own[q["id"]]], p) for q in questions]
            per_rate[f"{p:g}"] = round(100.0 * sum(changes) / max(len(changes), 1), 2)
        out["encodings"][folder] = {"questions": len(questions), "videos": len(rows),
                                    "expected_answers_changed_pct": per_rate}
    change = data.get("report", {}).get("change")
    if change:
        questions = next(iter(out["encodings"].values()))["questions"]
        out["measured"] = {"counts_moved_pct": round(100.0 * change["counts_moved"] / max(change["videos_compared"], 1), 2),
                           "answers_changed_pct": round(100.0 * change["answers_changed"] / max(questions, 1), 2)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("counts", nargs="+", type=Path, help="count_stability.py --json files")
    ap.add_argument("--rates", nargs="+", type=float, default=list(RATES), help="per-video rates of a one-off count")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    rates = tuple(args.rates)
    if any(not 0.0 <= p <= 1.0 for p in rates):
        ap.error("rates are probabilities between 0 and 1")
    reports = [bound(path, rates) for path in args.counts]
    print(f"{'encoding':<40} {'questions':>9} " + " ".join(f"{'p=' + format(p, 'g'):>8}" for p in rates)
          + f" {'measured: moved / changed':>26}")
    total_q, total = 0, dict.fromkeys(rates, 0.0)
    for rep in reports:
        for i, (folder, enc) in enumerate(rep["encodings"].items()):
            figures = enc["expected_answers_changed_pct"]
            measured = rep.get("measured") if i == 0 else None
            shown = f"{measured['counts_moved_pct']:.1f} % / {measured['answers_changed_pct']:.1f} %" if measured else ""
            print(f"{Path(folder).name:<40} {enc['questions']:>9} "
                  + " ".join(f"{figures[f'{p:g}']:>7.1f}%" for p in rates) + f" {shown:>26}")
            total_q += enc["questions"]
            for p in rates:
                total[p] += figures[f"{p:g}"] * enc["questions"]
    if total_q:
        print(f"{'all (question-weighted)':<40} {total_q:>9} " + " ".join(f"{total[p] / total_q:>7.1f}%" for p in rates))
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
