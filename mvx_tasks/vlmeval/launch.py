"""``mvx-bench vlmeval``: register the MVX datasets and SAMA, then run VLMEvalKit's own runner in-process.

VLMEvalKit is installed two ways, with its runner in two places: the PyPI build (``ms-vlmeval``) has
it at ``vlmeval/run.py``; a git clone of open-compass/VLMEvalKit installed with ``pip install -e .``
(how most of its users install it) has ``run.py`` at the repository root, beside the ``vlmeval``
package, and no ``vlmeval/run.py``. Both files end in ``if __name__ == '__main__': load_env(); main()``
with ``main()`` reading ``sys.argv``: that script entry is all this wrapper uses (never the PyPI
build's ``run_task``/``parse_args``). It finds the installed one (:func:`find_runner`), registers the
MVX datasets and SAMA in this process (registration only lives in this process, so the runner
cannot be a separate ``python run.py``), and runs the script as ``__main__`` with VLMEvalKit's own
options, the ones named here plus anything after ``--`` (``--judge``, ``--api-nproc``, ``--reuse``...).

Success is judged by the files this run wrote under ``<work-dir>/<model>/`` (any depth: the
repository layout puts them in a per-run sub-folder): an MVX dataset's records (mode all/eval),
else the predictions. The runner itself logs and skips failures.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import runpy
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .names import DATASET_ENV, RECORDS_SUFFIX, base_name

PRED_EXTS = (".xlsx", ".tsv", ".json", ".csv", ".jsonl")


@dataclass(frozen=True)
class Runner:
    """VLMEvalKit's runner script and the layout it comes from (``pypi`` or ``repository``)."""

    script: Path
    layout: str

    @property
    def options(self) -> frozenset[str]:
        """The command-line options the script declares (read from its text, never imported)."""
        return frozenset(re.findall(r"add_argument\(\s*['\"](--[\w-]+)", self.script.read_text(encoding="utf-8")))


def find_runner() -> Runner:
    """The installed VLMEvalKit's ``run.py``: the repository's (beside the ``vlmeval`` package) when
    present, else the PyPI build's (inside it)."""
    spec = importlib.util.find_spec("vlmeval")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("VLMEvalKit is not installed: `pip install ms-vlmeval` (PyPI build), or clone "
                           "https://github.com/open-compass/VLMEvalKit and `pip install -e .` in it")
    package = Path(next(iter(spec.submodule_search_locations)))
    beside, inside = package.parent / "run.py", package / "run.py"
    if beside.is_file():
        return Runner(beside, "repository")
    if inside.is_file():
        return Runner(inside, "pypi")
    raise RuntimeError(f"VLMEvalKit at {package} has no runner: neither {beside} (a git clone) nor {inside} "
                       f"(the PyPI build) exists; reinstall VLMEvalKit")


def _is_mvx(name: str) -> bool:
    try:
        base_name(name)
    except KeyError:
        return False
    return True


def expected_patterns(data: Sequence[str], model: Sequence[str], mode: str) -> list[tuple[str, str]]:
    """(model, file-name glob) per (model, dataset) pair: an MVX dataset's records after evaluation,
    else (mode infer, or a dataset of VLMEvalKit's own) its predictions file."""
    out = []
    for m in model:
        for d in data:
            if mode != "infer" and _is_mvx(d):
                out.append((m, f"{m}_{d}{RECORDS_SUFFIX}"))
            else:
                out.append((m, f"{m}_{d}.*"))
    return out


def written_since(work_dir: str | Path, model: str, pattern: str, since: float) -> list[Path]:
    """Files under ``<work_dir>/<model>/`` (any depth) matching ``pattern``, written at or after ``since``."""
    root = Path(work_dir) / model
    found = []
    for p in root.rglob(pattern) if root.is_dir() else []:
        if pattern.endswith(".*") and p.suffix not in PRED_EXTS:
            continue  # a checkpoint (.pkl), not the predictions
        if p.is_file() and p.stat().st_mtime >= since:
            found.append(p)
    return found


def runner_argv(runner: Runner, data: Sequence[str], model: Sequence[str], work_dir: str | Path, mode: str,
                limit: int | None, extra_args: Sequence[str]) -> list[str]:
    """The runner's command line: options both layouts' ``run.py`` accept, then the user's own. The
    PyPI build's runner has ``--limit`` (and passes it to the datasets); the repository's has not, and
    the MVX datasets get the limit from their registration instead
    (:func:`~mvx_tasks.vlmeval.register.register_datasets`)."""
    argv = ["--data", *data, "--model", *model, "--work-dir", str(work_dir), "--mode", mode]
    if limit is not None and "--limit" in runner.options:
        argv += ["--limit", str(int(limit))]  # the MVX dataset applies it per task
    return argv + list(extra_args)


def run_vlmeval(data: Sequence[str], model: Sequence[str], work_dir: str | Path = "outputs/vlmeval", *,
                limit: int | None = None, mode: str = "all", data_root: str | Path | None = None,
                extra_args: Sequence[str] = ()) -> int:
    """Run VLMEvalKit on datasets (MVX ones and its own); 0 when every (model, dataset) pair left its output."""
    from .register import register

    runner = find_runner()
    register(limit=limit)
    if data_root is not None:
        for name in data:
            if _is_mvx(name):
                os.environ[DATASET_ENV[base_name(name)][0]] = str(Path(data_root).resolve())
    argv = [str(runner.script), *runner_argv(runner, data, model, work_dir, mode, limit, extra_args)]
    print(f"VLMEvalKit ({runner.layout} layout): python {' '.join(argv)}", file=sys.stderr, flush=True)
    started = time.time() - 1  # file times have coarse resolution on some filesystems
    old = sys.argv
    sys.argv = argv
    try:
        runpy.run_path(str(runner.script), run_name="__main__")
    except SystemExit as exc:  # argparse rejected an option (it printed why), or the script exited
        if exc.code not in (None, 0):
            print(f"error: VLMEvalKit's runner exited with {exc.code}", file=sys.stderr)
            return 2 if isinstance(exc.code, int) and exc.code == 2 else 1
    except Exception as exc:  # report, then judge by what was written like any other failure
        print(f"error: VLMEvalKit stopped: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        sys.argv = old
    missing = [(m, pat) for m, pat in expected_patterns(data, model, mode)
               if not written_since(work_dir, m, pat, started)]
    for m, pat in missing:
        print(f"error: this run did not write {pat} under {Path(work_dir) / m}; see the log under "
              f"{Path(work_dir) / 'logs'}", file=sys.stderr)
    return 1 if missing else 0


def add_vlmeval_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``mvx-bench vlmeval`` (VLMEvalKit's other options go after ``--``)."""
    parser.add_argument("--data", nargs="+", required=True,
                        help="e.g. MVX_Bench_8frame MVX_Synth_16frame, or any VLMEvalKit dataset")
    parser.add_argument("--model", nargs="+", required=True, help="VLMEvalKit model names, or SAMA / SAMA_offline")
    parser.add_argument("--work-dir", default="outputs/vlmeval")
    parser.add_argument("--limit", type=int, default=None, help="questions per task")
    parser.add_argument("--mode", choices=("all", "infer", "eval"), default="all")
    parser.add_argument("--data-root", default=None, help="canonical folder (else MVX_BENCH_DATA / MVX_SYNTH_DATA)")


def cmd_vlmeval(args: argparse.Namespace) -> int:
    return run_vlmeval(args.data, args.model, args.work_dir, limit=args.limit, mode=args.mode,
                       data_root=args.data_root, extra_args=list(getattr(args, "extra", None) or []))
