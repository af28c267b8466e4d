"""``mvx-bench verify``: a dataset folder checked for schema, ids, per-task counts and every video
present and decodable to its end."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .schema import SchemaError, Sample, validate_sample
from .data import DATA_FILE, DataSourceError, resolve_in_root
from .data_peers import load_benchmark
# ----------------------------------------------------------------------------- verify


@dataclass
class VerifyReport:
    root: str
    counts: dict[str, int] = field(default_factory=dict)
    expected: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    n_videos: int = 0
    benchmark: str = "MVX-Bench"
    expected_total: int | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    def render(self) -> str:
        w = max([6] + [len(c) + 2 for c in list(self.counts) + list(self.expected)])
        lines = [f"{self.benchmark} dataset at {self.root}", f"{'task':<{w}}{'questions':>10}{'expected':>10}"]
        for code in sorted(set(self.counts) | set(self.expected), key=lambda c: list(self.expected).index(c)
                           if c in self.expected else 99):
            n, e = self.counts.get(code, 0), self.expected.get(code, 0)
            flag = "" if n == e else ("  (per-task count not published)" if not e else "  (differs from the full benchmark)")
            lines.append(f"{code:<{w}}{n:>10}{(e or '?'):>10}{flag}")
        total = self.expected_total if self.expected_total is not None else sum(self.expected.values())
        lines.append(f"{'total':<{w}}{sum(self.counts.values()):>10}{total:>10}")
        lines.append(f"videos checked: {self.n_videos}")
        lines += [f"warning: {w}" for w in self.warnings]
        lines += [f"error: {e}" for e in self.errors]
        lines.append("OK" if self.ok else f"FAILED with {len(self.errors)} error(s)")
        return "\n".join(lines)


def verify(root: str | Path, *, decode: bool = True, benchmark: str | None = None) -> VerifyReport:
    """Check a canonical folder: schema, ids, per-task counts, every video present and decodable to its
    end (a truncated file is reported with the time where its data stops). ``benchmark`` (a peer such
    as ``cvbench``) also reads the authors' own files through that benchmark's mapping."""
    from .video_decoder import check_video
    from .registry import bench_tasks

    root = Path(root)
    bm = None
    if benchmark and benchmark.lower().replace("-", "_") not in ("mvx", "mvx_bench"):
        from .benchmarks import get_benchmark

        bm = get_benchmark(benchmark)
    tasks = bm.tasks if bm else bench_tasks()
    report = VerifyReport(root=str(root), expected={t.code: t.n_questions for t in tasks},
                          benchmark=bm.name if bm else "MVX-Bench",
                          expected_total=bm.n_questions if bm else sum(t.n_questions for t in tasks))
    data = root / DATA_FILE
    samples: list[Sample] = []
    if bm is not None and not data.is_file():
        try:
            samples = load_benchmark(bm, root)
        except (SchemaError, DataSourceError, ValueError) as exc:
            report.errors.append(str(exc))
            return report
    elif not data.is_file():
        report.errors.append(f"{data} does not exist (a dataset folder holds {DATA_FILE} and its videos)")
        return report
    for lineno, line in enumerate(data.read_text(encoding="utf-8").splitlines() if data.is_file() else [], 1):
        if not line.strip():
            continue
        where = f"{data}:{lineno}"
        try:
            raw = json.loads(line)
            samples.append(validate_sample(raw, where=where))
        except json.JSONDecodeError as exc:
            report.errors.append(f"({where}): not valid JSON ({exc.msg}). Fix: write one JSON object per line")
        except SchemaError as exc:
            report.errors.append(str(exc))
    ids = Counter(s.id for s in samples)
    for sid, n in ids.items():
        if n > 1:
            report.errors.append(f"question id {sid!r} appears {n} times. Fix: give every question a unique id")
    report.counts = dict(Counter(s.task for s in samples))
    seen: dict[str, str | None] = {}
    for s in samples:
        for v in s.videos:
            for rel, what in ((v.path, "video"), (v.subtitle, "subtitle")):
                if not rel:
                    continue
                try:
                    p = resolve_in_root(root, rel, sample_id=s.id, what=f"{what} of {v.label!r}")
                except SchemaError as exc:
                    report.errors.append(str(exc))
                    continue
                if what == "subtitle":
                    if not p.is_file():
                        report.errors.append(f"question {s.id!r}: subtitle file {p} is missing. Fix: add it or "
                                             f"remove the subtitle field")
                    continue
                key = str(p)
                if key not in seen:
                    seen[key] = check_video(p) if decode else (None if p.is_file() else f"video file {p} does not exist")
                if seen[key]:
                    report.errors.append(f"question {s.id!r}, video {v.label!r}: {seen[key]}. Fix: restore or "
                                         f"re-encode the file (H.264 MP4)")
    report.n_videos = len(seen)
    for code, n in report.counts.items():
        if code in report.expected and report.expected[code] and n != report.expected[code]:
            report.warnings.append(f"task {code} has {n} questions; the full {report.benchmark} has "
                                   f"{report.expected[code]}")
    total = sum(report.counts.values())
    if bm is not None and total != bm.n_questions:
        report.warnings.append(f"{total} questions; the full {bm.name} has {bm.n_questions} ({bm.counts_note})")
    for code in report.expected:
        if code not in report.counts:
            report.warnings.append(f"task {code} has no questions")
    return report
