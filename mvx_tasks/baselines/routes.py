"""``mvx-bench routes``: run each baseline config's exact route on a tiny model of its architecture.

A config is checked, not trusted: for every config whose ``architecture`` transformers implements
natively, a tiny random model of that architecture is built offline (:mod:`.tiny_models`), the
config's own adapter and arguments run on the video-visibility probe through lmms-eval (only
``pretrained`` and the device arguments change), and a spy on the model's processor records what
reached it: per question, how many videos, how many frames each, and whether each video's label
("Video 2:") stands right before that video's frames. Probe clips are longer than the frame budget,
so an adapter that ignores the budget shows. Configs of remote-code, vLLM-only or API models are
reported "route not verified offline" with their config's reason.

All checked configs run in ONE worker process (lmms-eval's CLI entry, in-process, one config after
the other), so torch, transformers and lmms-eval are imported once.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..harness_configs import (CONFIG_DIR, ConfigError, HarnessConfig, build_command, load_configs, local_args,
                               replace_args, run_env)

#: Probe shape for the check: 2- and 3-video questions (5 questions); clips have at least 12 frames and
#: always 4 more than the largest frame budget checked, so an adapter that ignores its budget shows.
PROBE_VIDEOS = (2, 3)
PROBE_CLIP_FRAMES = 12
CACHE_REVISION = 1  # bump when a tiny builder changes, so cached tiny models are rebuilt
PROBE_TASK = {"video": "mvx_probe", "frames": "mvx_probe_frames", "agent": "mvx_probe"}


def builders() -> dict[str, Callable[..., Path]]:
    """Tiny-model builders by transformers ``model_type`` (a config's ``architecture``)."""
    from .tiny_models import BUILDERS

    return BUILDERS


def offline_reason(cfg: HarnessConfig) -> str | None:
    """Why a config's route cannot be checked offline, or None when it can."""
    if cfg.route == "agent":
        return "the agent reads the videos itself (tested by the SAMA suites)"
    if cfg.architecture in builders():
        return None
    return cfg.offline_reason or f"no tiny {cfg.architecture or 'model'} can be built offline"


def default_cache() -> Path:
    hf_home = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
    return hf_home / "mvx_tiny_models"


def tiny_model(architecture: str, cache: str | Path) -> Path:
    """The tiny model folder of ``architecture`` in ``cache``, built once (atomically)."""
    root = Path(cache) / f"{architecture}-r{CACHE_REVISION}"
    if (root / "config.json").is_file():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{architecture}-", dir=root.parent))
    builders()[architecture](tmp)
    try:
        tmp.rename(root)
    except OSError:  # built concurrently by another process
        shutil.rmtree(tmp, ignore_errors=True)
    return root


# ----------------------------------------------------------------------------- the worker (one process)

_SPY_FILE: list[str] = []


def _install_spy(processor_cls: type) -> None:
    """Wrap ``processor_cls.__call__`` to log text, image count and frames per video of every call."""
    if getattr(processor_cls.__call__, "_mvx_spy", False):
        return
    original = processor_cls.__call__

    def spy(self, *args, **kwargs):
        if _SPY_FILE:
            text = kwargs.get("text", args[1] if len(args) > 1 else None)
            if isinstance(text, (list, tuple)):
                text = text[0] if text else ""
            images = kwargs.get("images", args[0] if args else None)
            videos = kwargs.get("videos")
            images = [] if images is None else (list(images) if isinstance(images, (list, tuple)) else [images])
            images = [i for sub in images for i in (sub if isinstance(sub, (list, tuple)) else [sub])]
            videos = [] if videos is None else (list(videos) if isinstance(videos, (list, tuple)) else [videos])
            rec = {"text": text, "images": len(images), "video_frames": [int(len(v)) for v in videos],
                   "image_token": getattr(self, "image_token", None), "video_token": getattr(self, "video_token", None)}
            with open(_SPY_FILE[0], "a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec) + "\n")
        return original(self, *args, **kwargs)

    spy._mvx_spy = True  # type: ignore[attr-defined]
    processor_cls.__call__ = spy


def _worker(plan_file: str) -> int:
    """Run every planned config in this process through lmms-eval's CLI entry."""
    from transformers import AutoProcessor

    from lmms_eval.__main__ import cli_evaluate

    plan = json.loads(Path(plan_file).read_text())
    for entry in plan:
        os.environ.update(entry["env"])
        _install_spy(type(AutoProcessor.from_pretrained(entry["folder"])))
        _SPY_FILE[:] = [entry["spy"]]
        sys.argv = ["lmms_eval", *entry["argv"]]
        print(f"# route check: {entry['name']}", flush=True)
        try:
            cli_evaluate()
        except BaseException as exc:  # noqa: BLE001 - one config's failure must not stop the others
            print(f"# route check: {entry['name']} raised {type(exc).__name__}: {exc}", flush=True)
        _SPY_FILE.clear()
    return 0


# ----------------------------------------------------------------------------- analysis

@dataclass
class QuestionSeen:
    """What reached the processor for one probe question."""

    id: str
    expected_videos: int
    videos: int
    frames: list[int]
    labels_adjacent: bool


@dataclass
class RouteResult:
    """One config's route check."""

    name: str
    model: str
    route: str
    verified: bool
    ran: bool = False
    reason: str = ""
    questions: list[QuestionSeen] = field(default_factory=list)
    expected_frames: int = 0
    results_file: str | None = None

    @property
    def every_video(self) -> bool:
        return bool(self.questions) and all(q.videos == q.expected_videos for q in self.questions)

    @property
    def labels_adjacent(self) -> bool:
        return bool(self.questions) and all(q.labels_adjacent for q in self.questions)

    @property
    def frames_ok(self) -> bool:
        return bool(self.questions) and all(f == self.expected_frames for q in self.questions for f in q.frames)

    @property
    def ok(self) -> bool:
        return self.ran and self.every_video and self.labels_adjacent and self.frames_ok

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "every_video": self.every_video, "labels_adjacent": self.labels_adjacent,
                "frames_ok": self.frames_ok, "ok": self.ok}


_TRAILING_MARKUP = re.compile(r"(?:\s|<[^<>\s]{1,40}>|\[[A-Z_]{2,20}\])*$")


def groups_in_call(rec: dict[str, Any], labels: Sequence[str]) -> list[dict[str, Any]]:
    """The videos one processor call carried, in prompt order: each a label (the "<label>:" or
    "<label> (N frames):" text right before it, else None) and its frame count (a video input's
    length, or the run of image placeholders with nothing but markup between them)."""
    tokens = [t for t in (rec.get("image_token"), rec.get("video_token")) if t]
    if not tokens:
        return []
    parts = re.split("(" + "|".join(map(re.escape, sorted(tokens, key=len, reverse=True))) + ")", rec["text"] or "")
    label_end = re.compile(r"(" + "|".join(map(re.escape, labels)) + r")(?: \(\d+ frames?\))?:$")
    frames = iter(rec.get("video_frames", []))
    groups: list[dict[str, Any]] = []
    for k in range(1, len(parts), 2):
        before = _TRAILING_MARKUP.sub("", parts[k - 1])
        m = label_end.search(before)
        label = m.group(1) if m else None
        if parts[k] == rec.get("video_token"):
            groups.append({"label": label, "frames": next(frames, 0), "kind": "video"})
        elif label is None and groups and groups[-1]["kind"] == "image" and not before.strip():
            groups[-1]["frames"] += 1
        else:
            groups.append({"label": label, "frames": 1, "kind": "image"})
    return groups


def analyse(records: list[dict[str, Any]], samples: list[Any]) -> list[QuestionSeen]:
    """Match each processor call to its probe question (by its question and options) and judge it."""
    seen = []
    for s in samples:
        options = [f"{k}. {v}" for k, v in s.options.items()]
        calls = [r for r in records if s.question in (r["text"] or "") and all(o in r["text"] for o in options)]
        labels = [v.label for v in s.videos]
        if not calls:
            seen.append(QuestionSeen(s.id, len(labels), 0, [], False))
            continue
        groups = groups_in_call(calls[-1], labels)
        seen.append(QuestionSeen(s.id, len(labels), len(groups), [g["frames"] for g in groups],
                                 [g["label"] for g in groups] == labels))
    return seen


#: Adapters whose request messages can be built offline (the engine or API they call cannot).
MESSAGE_ADAPTERS = ("vllm", "openai")


def check_messages(cfg: HarnessConfig, probe: Path, samples: list[Any]) -> list[QuestionSeen]:
    """What a vLLM or API config would send, as far as offline allows: each probe question's task
    messages through lmms-eval's own ``to_openai_messages`` (which both adapters use), judged like a
    processor call (labels next to their frames, frames per video)."""
    from lmms_eval.protocol import ChatMessages

    from .. import harness

    saved = {k: os.environ.get(k) for k in ("MVX_PROBE_DATA", "MVX_FRAMES_PER_VIDEO")}
    os.environ.update({"MVX_PROBE_DATA": str(probe), **run_env(cfg)})
    try:
        build = harness.frames_doc_to_messages if cfg.route == "frames" else harness.doc_to_messages
        records = []
        for doc in harness.task_docs("probe", "PRB"):
            parts = []
            for message in ChatMessages(messages=build(doc)).to_openai_messages():
                for item in message["content"]:
                    parts.append(item["text"] if item["type"] == "text" else "<IMG>")
            records.append({"text": "".join(parts), "image_token": "<IMG>", "video_frames": []})
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return analyse(records, samples)


def _read_run(out: Path, task: str, n_questions: int) -> tuple[bool, str, str | None]:
    """(ran, why not, results file): every question answered without a recorded failure."""
    found = sorted(out.rglob("*_results.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        return False, "lmms-eval wrote no results file (see the worker log)", None
    res = json.loads(found[-1].read_text()).get("results", {}).get(task)
    if res is None:
        return False, f"no {task} results in {found[-1]}", str(found[-1])
    failed = int(res.get("mvx_agent_failed,none", 0)) + int(res.get("mvx_failed,none", 0))
    samples = sorted(out.rglob(f"*_samples_{task}.jsonl"))
    n = len(samples[-1].read_text().splitlines()) if samples else 0
    if n != n_questions or failed:
        return False, f"{n} of {n_questions} questions logged, {failed} failed", str(found[-1])
    return True, "", str(found[-1])


def check_routes(configs: Sequence[HarnessConfig], work: str | Path, *, cache: str | Path | None = None,
                 save_dir: str | Path | None = None, stream: Any = None) -> list[RouteResult]:
    """Run the route check for ``configs``; tiny models come from (and go to) ``cache``. With
    ``save_dir``, each checked config's tiny model is also linked as ``<save_dir>/<config name>``
    (the local clones that ``mvx-bench run --local-models`` reads)."""
    from ..data import load_local
    from ..probe import generate_probe

    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    cache = Path(cache) if cache else default_cache()
    clip_frames = max([PROBE_CLIP_FRAMES, *(c.frames_per_video + 4 for c in configs)])
    probe = work / f"probe-{clip_frames}f"
    if not (probe / "data.jsonl").is_file():
        generate_probe(probe, n_videos=PROBE_VIDEOS, clip_frames=clip_frames)
    samples = load_local(probe)
    results, plan = [], []
    for cfg in configs:
        why = offline_reason(cfg)
        res = RouteResult(cfg.name, cfg.model, cfg.route, verified=why is None, reason=why or "",
                          expected_frames=cfg.frames_per_video)
        results.append(res)
        if why:
            if cfg.model in MESSAGE_ADAPTERS:
                res.questions = check_messages(cfg, probe, samples)
            continue
        folder = tiny_model(cfg.architecture, cache)
        if save_dir:
            link = Path(save_dir) / cfg.name
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                link.symlink_to(folder.resolve(), target_is_directory=True)
        local = replace_args(cfg, local_args(cfg, folder, "cpu"))
        task = PROBE_TASK[cfg.route]
        cmd = build_command(local, output=work / "runs", tasks=task,
                            extra_args=["--gen_kwargs", "max_new_tokens=4,temperature=0,do_sample=False"])
        plan.append({"name": cfg.name, "folder": str(folder), "argv": cmd[3:],
                     "spy": str(work / f"{cfg.name}.spy.jsonl"),
                     "env": {**run_env(cfg), "MVX_PROBE_DATA": str(probe), "HF_HUB_OFFLINE": "1"}})
        Path(plan[-1]["spy"]).unlink(missing_ok=True)
        shutil.rmtree(work / "runs" / cfg.name, ignore_errors=True)  # judge this run's files only
    if plan:
        (work / "plan.json").write_text(json.dumps(plan, indent=1))
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        with open(work / "worker.log", "w") as log:
            subprocess.run([sys.executable, "-m", "mvx_tasks.baselines.routes", "--worker", str(work / "plan.json")],
                           env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
    by_name = {e["name"]: e for e in plan}
    for res in results:
        entry = by_name.get(res.name)
        if entry is None:
            continue
        cfg_route = PROBE_TASK[res.route]
        res.ran, why, res.results_file = _read_run(work / "runs" / res.name, cfg_route, len(samples))
        spy = Path(entry["spy"])
        records = [json.loads(x) for x in spy.read_text().splitlines()] if spy.is_file() else []
        res.questions = analyse(records, samples)
        res.reason = why
    return results


def render(results: Sequence[RouteResult]) -> str:
    """The per-config report: ran, videos delivered per question, frames per video, labels adjacent."""
    rows = [f"{'config':<22}{'adapter':<14}{'route':<7}{'ran':<5}{'videos/question':<22}{'frames/video':<14}"
            f"{'labels adjacent':<17}verdict"]
    for r in results:
        if not r.verified:
            seen = ""
            if r.questions:
                frames = sorted({f for q in r.questions for f in q.frames})
                seen = (f" (request messages: {'every video' if r.every_video else 'videos MISSING'}, "
                        f"{'labels adjacent' if r.labels_adjacent else 'labels NOT adjacent'}, "
                        f"frames {','.join(map(str, frames))})")
            rows.append(f"{r.name:<22}{r.model:<14}{r.route:<7}{'-':<5}{'-':<22}{'-':<14}{'-':<17}"
                        f"route not verified offline: {r.reason}{seen}")
            continue
        vids = " ".join(f"{q.videos}/{q.expected_videos}" for q in r.questions)
        frames = sorted({f for q in r.questions for f in q.frames})
        verdict = (f"ok: ran, every video, labels adjacent, {r.expected_frames} frames per video" if r.ok
                   else "FAILED: " + "; ".join(x for x in (
                       "" if r.ran else f"did not run ({r.reason})",
                       "" if r.every_video else "videos missing or not told apart",
                       "" if r.labels_adjacent else "labels not next to their videos",
                       "" if r.frames_ok else f"frames per video {frames}, budget {r.expected_frames}") if x))
        rows.append(f"{r.name:<22}{r.model:<14}{r.route:<7}{'yes' if r.ran else 'no':<5}{vids:<22}"
                    f"{','.join(map(str, frames)) or '-':<14}{'yes' if r.labels_adjacent else 'no':<17}{verdict}")
    return "\n".join(rows)


def markdown_table(results: Sequence[RouteResult], configs: Sequence[HarnessConfig]) -> str:
    """The README's routes table: per baseline, adapter, route, frames, labels, verified or not, and why."""
    by_name = {c.name: c for c in configs}
    rows = ["| Table 1 row | config | adapter | route (task group) | frames per video | labels | verified by "
            "`mvx-bench routes` | reason |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        cfg = by_name[r.name]
        frames = sorted({f for q in r.questions for f in q.frames})
        labels = ("next to each video" if r.labels_adjacent else "NOT next to the videos") if r.questions else "-"
        if r.verified:
            verdict = "yes: ran, every video" if r.ok else "NO: " + render([r]).splitlines()[-1].split("FAILED: ")[-1]
        else:
            verdict = "no (request messages checked)" if r.questions else "no"
        reason = (cfg.offline_reason or "") if not r.verified else cfg.route_reason.split(";")[0].split(". ")[0]
        rows.append(f"| {cfg.paper_row or '-'} | `{r.name}` | `{r.model}` | {r.route} (`{cfg.tasks}`) | "
                    f"{','.join(map(str, frames)) or cfg.frames_per_video} | {labels} | {verdict} | {reason} |")
    return "\n".join(rows)


def add_routes_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("configs", nargs="*", default=[str(CONFIG_DIR)],
                        help="config YAML files, folders of them, or config names (default: harness_configs/)")
    parser.add_argument("--work", default="outputs/routes", help="folder for the probe, run outputs and spy logs")
    parser.add_argument("--cache", default=None, help="tiny-model cache (default: $HF_HOME/mvx_tiny_models)")
    parser.add_argument("--save-local-models", default=None, metavar="DIR",
                        help="also link each checked config's tiny model as DIR/<config name> (for run --local-models)")
    parser.add_argument("--json", default=None, help="also write the results as JSON here")
    parser.add_argument("--markdown", action="store_true", help="also print the README's routes table")


def cmd_routes(args: argparse.Namespace) -> int:
    """0 when every checkable config passes; configs that cannot run offline are listed, and fail only
    when the request messages they would send drop a video, a label or frames."""
    try:
        cfgs = [c for c in load_configs(args.configs or [CONFIG_DIR]) if c.route != "agent"]
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results = check_routes(cfgs, args.work, cache=args.cache, save_dir=args.save_local_models)
    print(render(results))
    if args.markdown:
        print("\n" + markdown_table(results, cfgs))
    if args.json:
        Path(args.json).write_text(json.dumps([r.to_dict() for r in results], indent=1))
    bad = [r.name for r in results if (r.verified and not r.ok)
           or (r.questions and not (r.every_video and r.labels_adjacent and r.frames_ok))]
    if bad:
        print(f"error: route check failed for {', '.join(bad)}; worker log: {Path(args.work) / 'worker.log'}",
              file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        sys.exit(_worker(sys.argv[2]))
    print("usage: mvx-bench routes [config ...]", file=sys.stderr)
    sys.exit(2)
