"""Which lmms-eval and ms-vlmeval releases the plugin works with: one throwaway environment per release.

Each environment is a venv whose ``.pth`` adds this project's venv (``site.addsitedir``: torch, the
editable mvx-sama and everything else are shared, not copied) and into which pip installs only the
harness release under test; pip resolves its dependencies against what it sees, so a release that
needs other versions of a shared package gets them inside the throwaway environment only. Then, with
that environment's Python, from a folder outside the repository:

- ``import``: the installed release is the one under test;
- ``sama``: ``lmms-eval --model sama`` (offline profile) on a tiny MVX-Synth set with no
  ``--include_path`` (task discovery through the entry point), judged by the results file: every
  question answered, none failed or unparsed;
- ``route``: ``mvx-bench routes qwen2_5_vl_7b``, the baseline route on a tiny random Qwen2.5-VL
  through lmms-eval's own ``qwen2_5_vl`` adapter, judged by its JSON report (ran, every video seen);
- ``models``: ``mvx-bench models``, lmms-eval's registry resolves ``sama`` and ``mvx_hf_chat``;
- ``vlmeval`` (ms-vlmeval releases): ``mvx-bench vlmeval --model SAMA_offline`` on MVX-Synth, judged
  by the records file and ``status.json``.

    .venv/bin/python benchmarks/harness_versions.py --lmms 0.6.1 0.7.2 0.7.3 --vlmeval 0.0.19 0.0.20

writes ``results/harness_versions.md`` (versions x checks) and a JSON beside the work folder.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SYNTH_TASKS = ("SPR", "CNT")  # a fast one and one that runs the tracker
ROUTE_CONFIG = "qwen2_5_vl_7b"
CHECKS = ("install", "import", "sama", "route", "models", "vlmeval")


def _run(cmd: list[str], *, env: dict[str, str], cwd: Path, log: Path, timeout: int) -> tuple[int, float]:
    t0 = time.time()
    with open(log, "w") as fh:
        try:
            rc = subprocess.run(cmd, env=env, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    return rc, time.time() - t0


def _tail(log: Path, n: int = 3) -> str:
    lines = [x.strip() for x in log.read_text(errors="replace").splitlines() if x.strip()] if log.is_file() else []
    return " / ".join(lines[-n:])[-300:]


def make_env(folder: Path, shared_site: str) -> Path:
    """A venv without pip whose ``.pth`` adds the shared site-packages (and runs their ``.pth`` files)."""
    if folder.exists():
        shutil.rmtree(folder)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    py = folder / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "zz_shared_mvx.pth").write_text(f"import site; site.addsitedir({shared_site!r})\n")
    return py


def constraints_without(names: set[str], out: Path) -> Path:
    """The project's constraints.txt less the pins of the packages under test."""
    keep = [line for line in (REPO / "constraints.txt").read_text().splitlines()
            if line.split("==")[0].strip().lower() not in names]
    out.write_text("\n".join(keep) + "\n")
    return out


class Matrix:
    def __init__(self, work: Path, timeout: int) -> None:
        self.work = work
        self.timeout = timeout
        self.shared_site = sysconfig.get_paths()["purelib"]
        self.rows: list[dict] = []
        self.elsewhere = work / "cwd"  # runs start outside the repository
        self.elsewhere.mkdir(parents=True, exist_ok=True)
        self.base_env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
                         "YOLO_OFFLINE": "1", "PYTHONNOUSERSITE": "1"}
        self.base_env.pop("PYTHONPATH", None)
        self.synth = self._synth()

    def _synth(self) -> Path:
        from mvx_tasks.synth import generate, read_manifest

        folder = self.work / "synth"
        if read_manifest(folder) is None:
            generate(folder, per_task=1, seed=0, tasks=list(SYNTH_TASKS), progress=False, workers=1)
        return folder

    def install(self, name: str, pip_name: str, version: str, no_deps: bool) -> tuple[Path, dict]:
        env_dir = self.work / f"{name}-{version}"
        py = make_env(env_dir, self.shared_site)
        cons = constraints_without({pip_name, "ms-vlmeval", "lmms-eval"}, self.work / f"constraints-{name}.txt")
        cmd = [str(py), "-m", "pip", "install", "-q", "-c", str(cons), f"{pip_name}=={version}"]
        if no_deps:
            cmd.insert(4, "--no-deps")
        rc, secs = _run(cmd, env=self.base_env, cwd=self.elsewhere, log=env_dir / "install.log", timeout=1800)
        row = {"harness": pip_name, "version": version, "install": {"ok": rc == 0, "seconds": round(secs),
                                                                   "detail": "" if rc == 0 else _tail(env_dir / "install.log")}}
        shadowed = subprocess.run([str(py), "-m", "pip", "list", "--path",
                                   subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                                  capture_output=True, text=True).stdout.strip(), "--format", "freeze"],
                                  capture_output=True, text=True, env=self.base_env).stdout.split()
        row["own_packages"] = shadowed  # what the release needed beside the shared venv
        return py, row

    def check_import(self, py: Path, module: str, dist: str, version: str, row: dict) -> None:
        code = (f"import importlib.metadata as m, {module}; v = m.version({dist!r}); "
                f"print(v, {module}.__file__); assert v == {version!r}, v")
        proc = subprocess.run([str(py), "-c", code], env=self.base_env, cwd=self.elsewhere, capture_output=True,
                              text=True, timeout=600)
        row["import"] = {"ok": proc.returncode == 0, "detail": (proc.stdout.strip() or proc.stderr.strip().splitlines()[-1:])}

    def check_sama(self, py: Path, out: Path, row: dict) -> None:
        tasks = ",".join(f"mvx_synth_{t.lower()}" for t in SYNTH_TASKS)
        shutil.rmtree(out, ignore_errors=True)
        cmd = [str(py), "-m", "lmms_eval", "--model", "sama", "--model_args",
               f"profile=offline,cache_dir=none,workers=1,trace_dir={out / 'traces'}", "--tasks", tasks,
               "--batch_size", "1", "--output_path", str(out / "results"), "--log_samples"]
        out.mkdir(parents=True)
        rc, secs = _run(cmd, env={**self.base_env, "MVX_SYNTH_DATA": str(self.synth)}, cwd=self.elsewhere,
                        log=out / "lmms_eval.log", timeout=self.timeout)
        found = sorted((out / "results").rglob("*_results.json"))
        if not found:
            row["sama"] = {"ok": False, "seconds": round(secs), "detail": f"no results file (exit {rc}): "
                                                                          f"{_tail(out / 'lmms_eval.log')}"}
            return
        res = json.loads(found[-1].read_text())
        per_task = {t: res["results"].get(f"mvx_synth_{t.lower()}", {}) for t in SYNTH_TASKS}
        n = sum(int((res.get("n-samples", {}).get(f"mvx_synth_{t.lower()}") or {}).get("effective", 0))
                for t in SYNTH_TASKS)
        bad = [t for t, r in per_task.items() if not r or r.get("mvx_failed,none") or r.get("mvx_unparsed,none")]
        traces = list((out / "traces").glob("*.json"))
        row["sama"] = {"ok": not bad and n == len(SYNTH_TASKS) and len(traces) == n, "seconds": round(secs),
                       "detail": f"{n} questions, {len(traces)} traces, acc "
                                 + ", ".join(f"{t} {per_task[t].get('mvx_acc,none', '-')}" for t in SYNTH_TASKS)
                                 + (f"; failed/unparsed/missing in {bad}" if bad else "")}

    def check_route(self, py: Path, out: Path, row: dict) -> None:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        report = out / "routes.json"
        cmd = [str(py), "-m", "mvx_tasks.cli", "routes", ROUTE_CONFIG, "--work", str(out / "work"),
               "--json", str(report)]
        rc, secs = _run(cmd, env=self.base_env, cwd=self.elsewhere, log=out / "routes.log", timeout=self.timeout)
        if not report.is_file():
            row["route"] = {"ok": False, "seconds": round(secs), "detail": f"no report (exit {rc}): {_tail(out / 'routes.log')}"}
            return
        (r,) = json.loads(report.read_text())
        row["route"] = {"ok": bool(r.get("verified") and r.get("ran") and rc == 0), "seconds": round(secs),
                        "detail": f"{ROUTE_CONFIG}: ran={r.get('ran')}, exit {rc}"
                                  + ("" if rc == 0 else f": {_tail(out / 'routes.log', 2)}")}

    def check_models(self, py: Path, out: Path, row: dict) -> None:
        proc = subprocess.run([str(py), "-m", "mvx_tasks.cli", "models", "--json"], env=self.base_env,
                              cwd=self.elsewhere, capture_output=True, text=True, timeout=600)
        try:
            models = json.loads(proc.stdout[proc.stdout.index("{"):])
        except ValueError:
            row["models"] = {"ok": False, "detail": _tail_text(proc.stderr)}
            return
        seen = {m: e.get("lmms_eval_resolves") for m, e in models.items()}
        row["models"] = {"ok": seen.get("sama") is True and seen.get("mvx_hf_chat") is True,
                         "detail": ", ".join(f"{m}: {'resolved' if v else 'NOT resolved'}" for m, v in sorted(seen.items()))}

    def check_vlmeval(self, py: Path, out: Path, row: dict) -> None:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        cmd = [str(py), "-m", "mvx_tasks.cli", "vlmeval", "--data", "MVX_Synth_8frame", "--model", "SAMA_offline",
               "--work-dir", str(out / "work"), "--data-root", str(self.synth)]
        rc, secs = _run(cmd, env=self.base_env, cwd=self.elsewhere, log=out / "vlmeval.log", timeout=self.timeout)
        recs = sorted((out / "work").rglob("*_mvx_records.jsonl"))
        if not recs:
            row["vlmeval"] = {"ok": False, "seconds": round(secs), "detail": f"no records file (exit {rc}): "
                                                                             f"{_tail(out / 'vlmeval.log')}"}
            return
        records = [json.loads(x) for x in recs[-1].read_text().splitlines() if x.strip()]
        failed = [r["id"] for r in records if r.get("failed")]
        status = sorted((out / "work").rglob("status.json"))
        row["vlmeval"] = {"ok": len(records) == len(SYNTH_TASKS) and not failed and bool(status), "seconds": round(secs),
                          "detail": f"{len(records)} records, {sum(bool(r.get('correct')) for r in records)} right"
                                    + (f", failed {failed}" if failed else "") + ("" if status else ", no status.json")}

    def lmms(self, version: str) -> dict:
        py, row = self.install("lmms", "lmms-eval", version, no_deps=False)
        if row["install"]["ok"]:
            self.check_import(py, "lmms_eval", "lmms_eval", version, row)
            out = self.work / f"runs-lmms-{version}"
            self.check_models(py, out, row)
            self.check_sama(py, out / "sama", row)
            self.check_route(py, out / "route", row)
        self.rows.append(row)
        return row

    def vlmeval(self, version: str) -> dict:
        py, row = self.install("vlmeval", "ms-vlmeval", version, no_deps=True)  # as `mvx-bench install-extras`
        if row["install"]["ok"]:
            self.check_import(py, "vlmeval", "ms-vlmeval", version, row)
            self.check_vlmeval(py, self.work / f"runs-vlmeval-{version}", row)
        self.rows.append(row)
        return row


def _tail_text(text: str) -> str:
    return " / ".join(x for x in text.strip().splitlines()[-2:])[-300:]


def markdown(rows: list[dict], date: str) -> str:
    intro = ("Each release in its own throwaway environment (sharing this project's venv: torch "
             f"{_version('torch')}, transformers {_version('transformers')}); checks are judged by the files the runs "
             "wrote, not exit codes. `sama`: `lmms-eval --model sama` (offline profile, no `--include_path`) on "
             f"MVX-Synth {'/'.join(SYNTH_TASKS)}, one question each; `route`: `mvx-bench routes {ROUTE_CONFIG}` "
             "(tiny random Qwen2.5-VL through lmms-eval's `qwen2_5_vl`); `models`: `mvx-bench models`; "
             "`vlmeval`: `mvx-bench vlmeval --model SAMA_offline` on the same MVX-Synth questions.")
    lines = [f"# Supported harness versions (checked {date}, CPU, `benchmarks/harness_versions.py`)", "", intro, "",
             "| harness | version | check | result | seconds | detail |", "|---|---|---|---|---|---|"]
    for r in rows:
        for check in CHECKS:
            c = r.get(check)
            if c is None:
                continue
            detail = c.get("detail")
            detail = detail if isinstance(detail, str) else " ".join(map(str, detail or []))
            lines.append(f"| {r['harness']} | {r['version']} | {check} | {'pass' if c['ok'] else 'FAIL'} | "
                         f"{c.get('seconds', '')} | {detail.replace('|', '/')} |")
    lines += ["", "Packages each release installed into its own environment (beside the shared venv):", ""]
    for r in rows:
        lines.append(f"- {r['harness']} {r['version']}: {', '.join(r.get('own_packages') or []) or '-'}")
    return "\n".join(lines) + "\n"


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lmms", nargs="*", default=["0.6.1", "0.7.2", "0.7.3"])
    ap.add_argument("--vlmeval", nargs="*", default=["0.0.19", "0.0.20"])
    ap.add_argument("--work", default="outputs/harness_versions")
    ap.add_argument("--out", default=str(REPO / "results" / "harness_versions.md"))
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per check run")
    args = ap.parse_args(argv)
    matrix = Matrix(Path(args.work).resolve(), args.timeout)
    for v in args.lmms:
        print(json.dumps(matrix.lmms(v)), flush=True)
    for v in args.vlmeval:
        print(json.dumps(matrix.vlmeval(v)), flush=True)
    (matrix.work / "harness_versions.json").write_text(json.dumps(matrix.rows, indent=1))
    Path(args.out).write_text(markdown(matrix.rows, datetime.date.today().isoformat()))
    print(f"wrote {args.out}")
    return 0 if all(c.get("ok", True) for r in matrix.rows for k, c in r.items() if k in CHECKS) else 1


if __name__ == "__main__":
    sys.exit(main())
