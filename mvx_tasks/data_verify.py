"""``mvx-bench verify``: a dataset folder checked for schema, ids, per-task counts and every video
present and decodable to its end; a peer benchmark's or MVX-Bench's hub copy read as published, with
every repaired and skipped row listed by id; ``--hub-columns``: how the hub copy's columns map."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .schema import SchemaError, Sample, validate_sample
from .data import DATA_FILE, DataSourceError, resolve_in_root
from .data_peers import load_benchmark_report
from .data_release import LoadReport
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
    load: LoadReport | None = None  # how a release (not the canonical layout) was read

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
        total = self.expected_total if self.expected_total is not None else "?"
        lines.append(f"{'total':<{w}}{sum(self.counts.values()):>10}{total:>10}")
        lines.append(f"videos checked: {self.n_videos}")
        if self.load is not None:
            lines += self.load.lines(counts=False)
        lines += [f"warning: {w}" for w in self.warnings]
        lines += [f"error: {e}" for e in self.errors]
        lines.append("OK" if self.ok else f"FAILED with {len(self.errors)} error(s)")
        return "\n".join(lines)


def verify(root: str | Path, *, decode: bool = True, benchmark: str | None = None, strict: bool | None = None,
           hub_columns=None) -> VerifyReport:
    """Check a canonical folder: schema, ids, per-task counts, every video present and decodable to its
    end (a truncated file is reported with the time where its data stops). ``benchmark`` (a peer such
    as ``cvbench``) reads the authors' own files through that benchmark's mapping; without it, a folder
    with no ``data.jsonl`` is read as MVX-Bench's hub copy (``hub_columns``: a :class:`~.data_hub.HubColumns`).
    Repaired and skipped rows are listed by id; ``strict`` makes a skip an error."""
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
                          expected_total=sum(t.n_questions for t in tasks) if all(t.n_questions for t in tasks)
                          else None)
    data = root / DATA_FILE
    samples: list[Sample] = []
    if not data.is_file():
        try:
            if bm is not None:
                samples, report.load = load_benchmark_report(bm, root, strict=strict)
            else:
                from .data_hub import load_hub_report

                samples, report.load = load_hub_report(root, columns=hub_columns, strict=strict)
        except (SchemaError, DataSourceError, ValueError) as exc:
            report.errors.append(str(exc) if bm is not None else
                                 f"{data} does not exist (a dataset folder holds {DATA_FILE} and its videos), and "
                                 f"the folder is not MVX-Bench's hub copy either: {exc}")
            return report
        report.warnings += report.load.count_warnings
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
    if report.load is None:  # a release's load already compared its counts (naming the file)
        for code, n in report.counts.items():
            if code in report.expected and report.expected[code] and n != report.expected[code]:
                report.warnings.append(f"task {code} has {n} questions; the full {report.benchmark} has "
                                       f"{report.expected[code]}")
    total = sum(report.counts.values())
    if bm is not None and report.expected_total is not None and total != report.expected_total:
        report.warnings.append(f"{total} questions; the full {bm.name} has {report.expected_total} ({bm.counts_note})")
    elif bm is not None and report.expected_total is None:
        report.warnings.append(f"{total} questions in {bm.display_name}: {bm.counts_note}")
    for code in report.expected:
        if code not in report.counts and not (report.load is not None and report.expected[code]):
            report.warnings.append(f"task {code} has no questions")
    return report


def hub_columns_report(root: str | Path, columns=None) -> tuple[str, bool]:
    """``mvx-bench verify --hub-columns``: the columns found in MVX-Bench's hub copy, which column each
    schema field was taken from (given by the user, or guessed) in how many rows, the rows that do not
    map, and the per-task counts. Returns (text, every row mapped)."""
    from .data_hub import FIELDS, HubColumns, load_hub_report
    from .data_release import read_rows, release_files
    from .data_hub import hub_releases
    from .registry import bench_tasks

    root = Path(root)
    columns = columns if columns is not None else HubColumns()
    try:
        rel, files, _ = release_files(root, hub_releases(columns), "MVX-Bench")
        samples, load = load_hub_report(root, columns=columns, strict=False)
    except (SchemaError, DataSourceError, ValueError) as exc:
        return f"MVX-Bench hub copy at {root}\nerror: {exc}", False
    found: Counter = Counter()
    for _, row in read_rows(files, arrow=rel.arrow):
        found.update(str(k) for k in row if not str(k).startswith("_"))
    used: dict[str, Counter] = {k: Counter() for k in FIELDS}
    for s in samples:
        for key, col in (s.meta.get("hub_mapping") or {}).items():
            used[key]["|".join(col) if isinstance(col, list) else str(col)] += 1
    lines = [f"MVX-Bench hub copy at {root}", *load.lines(counts=False)[:1],
             f"read as: {load.release}", *(f"not read: {f}" for f in load.not_read),
             f"columns found ({len(found)}): " + ", ".join(f"{c} ({n} rows)" if n != load.rows else c
                                                          for c, n in sorted(found.items())),
             f"{'field':<10}{'column':<28}{'how':<9}rows"]
    for key in FIELDS:
        how = "given" if key in columns.columns else "guessed"
        if not used[key]:
            lines.append(f"{key:<10}{'(none)':<28}{how:<9}0")
        for col, n in used[key].most_common():
            lines.append(f"{key:<10}{col:<28}{how:<9}{n}")
    lines.append(f"rows: {load.rows}; mapped {load.loaded}; not mapped {len(load.skips)}")
    lines += [f"  {n.line()}" for n in load.skips]
    lines.append("per task: " + ", ".join(f"{t.code} {load.counts.get(t.code, 0)}/{t.n_questions}" for t in bench_tasks()))
    lines += [f"warning: {w}" for w in load.count_warnings]
    return "\n".join(lines), not load.skips
