"""Score the lite backends' raw perception on an MVX-Synth set against the generators' facts.

For every question of a generated set the backends are called the way the agent would call them
(the question's target phrase as the query, whole-video windows) and their outputs are scored
against the generator's recorded ``meta`` (which only this script reads, never a backend):

* CNT: the target shape's count per video (scene graph and tracker) vs the true count, and the
  relation rule's answer (the candidate whose count best satisfies the relation).
* SPR: camera trends per video vs the true trend set, and the "shares a trend" answer rule.
* SEQ: clip order maximising summed pairwise continuity.
* VS: content similarity ranking; ART: style similarity ranking; MVR: motion-timing similarity +
  MVR_CONTENT_WEIGHT x content similarity (the scripted policy's rule).
* AM: the scripted policy's rule: the main actor's motion patterns (Jaccard) against the reference's.
* RID: identity similarity of the two videos (calibrated: >= 0.5 same), its AUC and the best
  threshold, for reference.
* FD: the motion analyzer's manipulation score, higher video picked.

Run: PYTHONPATH=. HF_HUB_OFFLINE=1 python benchmarks/lite_on_synth.py /tmp/synth_tune [--tasks CNT,SPR] [-v]
Generate a set first: python -c "from mvx_tasks.synth import generate; generate('/tmp/synth_tune', per_task=12, seed=1)"
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

import numpy as np

CHANCE = {"CNT": 0.25, "SPR": 0.25, "VS": 0.25, "ART": 0.25, "MVR": 0.25, "AM": 0.25, "RID": 0.5, "FD": 0.5}
TARGET = {"CNT": 0.6, "SPR": 0.7, "SEQ": 0.7, "VS": 0.8, "ART": 0.5, "MVR": 0.5, "AM": 0.5, "RID": 0.65, "FD": 0.65}
CANDS = ("Video A", "Video B", "Video C", "Video D")


class Timer:
    """Seconds per backend call, by call name."""

    def __init__(self) -> None:
        self.total: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def __call__(self, name: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        out = fn(*args, **kw)
        self.total[name] += time.perf_counter() - t0
        self.calls[name] += 1
        return out

    def summary(self) -> str:
        return ", ".join(f"{k} {self.total[k] / max(self.calls[k], 1):.2f}s" for k in sorted(self.total))


class Bench:
    """Holds the backends and the data set; one ``run_<task>`` per task returns a score dict."""

    def __init__(self, root: Path, verbose: bool = False) -> None:
        from sama_model.tools.backends import create_backend

        self.root = root
        self.verbose = verbose
        self.sg = create_backend("scene_graph", "lite", shared=False)
        self.tr = create_backend("object_tracker", "lite", shared=False)
        self.mo = create_backend("motion_analyzer", "lite", shared=False)
        self.fx = create_backend("manipulation_detector", "lite", shared=False)
        self.sim = create_backend("visual_similarity", "lite", shared=False)
        self.timer = Timer()

    def clip(self, sample: dict, label: str):
        from mvx_tasks.video_decoder import load_video

        video = next(v for v in sample["videos"] if v["label"] == label)
        return load_video(self.root / video["path"])

    def log(self, *a: Any) -> None:
        if self.verbose:
            print("   ", *a)

    # -- tasks ---------------------------------------------------------------------------------
    def run_cnt(self, samples: list[dict]) -> dict:
        exact = {"scene_graph": [], "tracker": []}
        answer = {"scene_graph": [], "tracker": []}
        for s in samples:
            m = s["meta"]
            phrase = re.search(r"Count the (\w+)", s["question"]).group(1)
            truth = {"Reference": m["reference_count"], **m["counts"]}
            got: dict[str, dict[str, int]] = {"scene_graph": {}, "tracker": {}}
            for label in truth:
                clip = self.clip(s, label)
                g = self.timer("scene_graph.graph", self.sg.graph, clip, phrase, (None, None), 8)
                t = self.timer("object_tracker.track", self.tr.track, clip, phrase)
                got["scene_graph"][label] = int(sum(g["counts"].values()))
                got["tracker"][label] = int(sum(t["counts"].values()))
            for k in got:
                exact[k] += [got[k][lab] == truth[lab] for lab in truth]
                answer[k].append(_relation_pick(m["relation"], got[k]) == s["answer"])
            self.log(s["id"], m["target"], m["relation"], "truth", truth, "sg", got["scene_graph"], "tr", got["tracker"])
        return {
            "accuracy": float(np.mean(answer["scene_graph"])),
            "detail": {
                f"{k} exact count": round(float(np.mean(exact[k])), 3) for k in exact
            } | {f"{k} answer": round(float(np.mean(answer[k])), 3) for k in answer},
        }

    def run_spr(self, samples: list[dict]) -> dict:
        exact, share, ans = [], [], []
        for s in samples:
            m = s["meta"]
            truth = {"Reference": set(m["reference_trends"]), **{k: set(v) for k, v in m["trends"].items()}}
            got, vec = {}, {}
            for label in truth:
                out = self.timer("motion_analyzer.analyze", self.mo.analyze, self.clip(s, label))
                cam = out["camera"]
                got[label] = {t.replace("_", " ") for t in cam["trends"]}
                vec[label] = np.array([cam["pan"], cam["tilt"], cam["zoom"]])
            exact += [got[k] == truth[k] for k in truth]
            share += [bool(got[k] & got["Reference"]) == bool(truth[k] & truth["Reference"]) for k in CANDS]
            scores = [len(got[k] & got["Reference"]) + 0.01 * _cos(vec[k], vec["Reference"]) for k in CANDS]
            ans.append("ABCD"[int(np.argmax(scores))] == s["answer"])
            self.log(s["id"], {k: sorted(v) for k, v in truth.items()}, {k: sorted(v) for k, v in got.items()})
        return {"accuracy": float(np.mean(ans)),
                "detail": {"exact trend set": round(float(np.mean(exact)), 3),
                           "shares-a-trend correct": round(float(np.mean(share)), 3)}}

    def run_seq(self, samples: list[dict]) -> dict:
        ans, chance, pair = [], [], []
        for s in samples:
            labels = [v["label"] for v in s["videos"]]
            clips = {lab: self.clip(s, lab) for lab in labels}
            cont = {(a, b): self.timer("motion_analyzer.continuity", self.mo.continuity, clips[a], clips[b])["score"]
                    for a, b in itertools.permutations(labels, 2)}
            best = max(s["options"], key=lambda k: sum(cont[p] for p in _pairs(s["options"][k])))
            ans.append(best == s["answer"])
            chance.append(s["meta"]["chance"])
            true = s["meta"]["true_order"]
            for a, b in zip(true[:-1], true[1:]):  # does the true successor win among all clips?
                pair.append(max((c for c in labels if c != a), key=lambda c: cont[(a, c)]) == b)
            self.log(s["id"], s["meta"]["process"], "pick", best, "answer", s["answer"])
        return {"accuracy": float(np.mean(ans)), "chance": float(np.mean(chance)),
                "detail": {"true successor ranked first": round(float(np.mean(pair)), 3)}}

    def _rank(self, samples: list[dict], aspect: str, name: str) -> dict:
        ans, margin = [], []
        for s in samples:
            ref = self.clip(s, "Reference")
            scores = [self.timer(f"visual_similarity.compare[{aspect}]", self.sim.compare, ref, self.clip(s, c),
                                 aspect=aspect)["score"] for c in CANDS]
            pos = "ABCD".index(s["answer"])
            ans.append(int(np.argmax(scores)) == pos)
            margin.append(scores[pos] - max(x for i, x in enumerate(scores) if i != pos))
            self.log(s["id"], name, [round(x, 3) for x in scores], "answer", s["answer"])
        return {"accuracy": float(np.mean(ans)), "detail": {"median margin": round(float(np.median(margin)), 4)}}

    def run_vs(self, samples: list[dict]) -> dict:
        return self._rank(samples, "content", "VS")

    def run_mvr(self, samples: list[dict]) -> dict:
        from sama_model.skills.multi_video_comparison.mvr import MVR_CONTENT_WEIGHT

        ans, by_kind = [], defaultdict(list)
        for s in samples:
            ref = self.clip(s, "Reference")
            scores = []
            for c in CANDS:
                clip = self.clip(s, c)
                motion = self.timer("visual_similarity.compare[motion]", self.sim.compare, ref, clip, aspect="motion")
                content = self.timer("visual_similarity.compare[content]", self.sim.compare, ref, clip)
                scores.append(motion["score"] + MVR_CONTENT_WEIGHT * content["score"])
            ok = "ABCD"[int(np.argmax(scores))] == s["answer"]
            ans.append(ok)
            by_kind[s["meta"]["candidates"][f"Video {s['answer']}"]["view"]["mode"]].append(ok)
            self.log(s["id"], "MVR", [round(x, 3) for x in scores], "answer", s["answer"])
        return {"accuracy": float(np.mean(ans)),
                "detail": {f"positive seen as {k}": round(float(np.mean(v)), 3) for k, v in sorted(by_kind.items())}}

    def run_art(self, samples: list[dict]) -> dict:
        return self._rank(samples, "style", "ART")

    def run_am(self, samples: list[dict]) -> dict:
        """The scripted policy's rule (:func:`motion_match` against the reference's main actor);
        "actor pattern correct" = the generator's action is among the main actor's patterns."""
        from sama_model.skills.multi_video_comparison.am import actor_patterns, motion_match

        ans, right = [], []
        from mvx_tasks.synth.sprites import MOTION_PATTERNS

        names = {**MOTION_PATTERNS, "pulse": ("growing", "shrinking", "pulsing"), "shake": ("shaking", "oscillating")}
        for s in samples:
            m = s["meta"]
            objs, pats = {}, {}
            for label in ("Reference",) + CANDS:
                objs[label] = self.timer("motion_analyzer.analyze", self.mo.analyze, self.clip(s, label))["objects"]
                pats[label] = actor_patterns(objs[label])
                truth = m["reference_action"] if label == "Reference" else m["actions"][label]
                want = names[truth]
                right.append(bool(pats[label] & ({want} if isinstance(want, str) else set(want))))
            ref = pats["Reference"]
            scores = [motion_match(ref, objs[c]) for c in CANDS]
            ans.append("ABCD"[int(np.argmax(scores))] == s["answer"])
            self.log(s["id"], m["reference_action"], m["actions"], {k: sorted(v) for k, v in pats.items()})
        return {"accuracy": float(np.mean(ans)), "detail": {"actor pattern correct": round(float(np.mean(right)), 3)}}

    def run_rid(self, samples: list[dict], threshold: float = 0.5) -> dict:
        scores, same = [], []
        for s in samples:
            a, b = self.clip(s, "Video 1"), self.clip(s, "Video 2")
            try:  # an identity aspect (the main object's look) where the backend has one
                out = self.timer("visual_similarity.compare[identity]", self.sim.compare, a, b, aspect="identity")
            except ValueError:
                out = self.timer("visual_similarity.compare[content]", self.sim.compare, a, b, aspect="content")
            scores.append(out["score"])
            same.append(bool(s["meta"]["same_identity"]))
            self.log(s["id"], "same" if same[-1] else "diff", out["score"])
        x, y = np.array(scores), np.array(same)
        acc = float(np.mean((x >= threshold) == y))
        best = max(float(np.mean((x >= t) == y)) for t in np.r_[x, 2.0])
        pos, neg = x[y], x[~y]
        auc = float(np.mean([p > n for p in pos for n in neg])) if len(pos) and len(neg) else float("nan")
        return {"accuracy": acc, "detail": {"oracle-threshold acc": round(best, 3), "AUC": round(auc, 3)}}

    def run_fd(self, samples: list[dict]) -> dict:
        ans, by_kind = [], defaultdict(list)
        for s in samples:
            sc = [self.timer("manipulation_detector.detect", self.fx.detect, self.clip(s, lab)).get("score", 0.0)
                  for lab in ("Video A", "Video B")]
            ok = "AB"[int(np.argmax(sc))] == s["answer"]
            ans.append(ok)
            by_kind[s["meta"]["manipulation"]["type"]].append(ok)
            self.log(s["id"], s["meta"]["manipulation"]["type"], "fake", s["answer"], [round(v, 3) for v in sc])
        return {"accuracy": float(np.mean(ans)),
                "detail": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by_kind.items())}}


def _pairs(option: str) -> list[tuple[str, str]]:
    order = [p.strip() for p in option.split(",")]
    return list(zip(order[:-1], order[1:]))


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-9))


def _relation_pick(relation: str, counts: dict[str, int]) -> str:
    """The candidate whose count best satisfies ``relation`` against the reference's count."""
    ref = counts["Reference"]
    def score(c: int) -> float:
        if relation == "same":
            return -abs(c - ref)
        return (c - ref) if relation == "greater" else (ref - c)
    sc = [score(counts[k]) for k in CANDS]
    # satisfying candidates first; among them the least extreme (a count error is more likely big)
    ok = [i for i, v in enumerate(sc) if v > 0 or (relation == "same" and v == 0)]
    pick = min(ok, key=lambda i: sc[i]) if len(ok) > 1 and relation != "same" else (ok[0] if ok else int(np.argmax(sc)))
    return "ABCD"[pick]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--tasks", default="CNT,SPR,SEQ,VS,ART,MVR,AM,RID,FD")
    ap.add_argument("--limit", type=int, default=0, help="questions per task (0 = all)")
    ap.add_argument("--json", type=Path, default=None, help="also write the table as JSON here")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    samples: dict[str, list[dict]] = defaultdict(list)
    for line in (args.root / "data.jsonl").read_text().splitlines():
        if line.strip():
            s = json.loads(line)
            samples[s["task"]].append(s)
    bench = Bench(args.root, args.verbose)
    rows = []
    for code in [c.strip().upper() for c in args.tasks.split(",") if c.strip()]:
        todo = samples.get(code, [])[: args.limit or None]
        if not todo:
            print(f"{code}: no questions in {args.root}")
            continue
        bench.timer = Timer()
        t0 = time.perf_counter()
        res = getattr(bench, f"run_{code.lower()}")(todo)
        res.update(task=code, n=len(todo), seconds=round(time.perf_counter() - t0, 1), calls=bench.timer.summary())
        res.setdefault("chance", CHANCE.get(code))
        rows.append(res)
        print(f"{code:4s} acc {res['accuracy']:.2f} (chance {res['chance']:.2f}, target {TARGET[code]:.2f}) "
              f"n={len(todo)}  {res['detail']}  [{res['calls']}]", flush=True)
    print("\n| task | n | accuracy | chance | target | detail | s/call |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        det = "; ".join(f"{k} {v}" for k, v in r["detail"].items())
        print(f"| {r['task']} | {r['n']} | {r['accuracy']:.2f} | {r['chance']:.2f} | {TARGET[r['task']]:.2f} | {det} | "
              f"{r['calls']} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
