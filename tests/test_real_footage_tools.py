"""benchmarks/real_footage_tools.py's table: every revision side by side, CPU or wall seconds, calls
over the issue's 0.5 s bound marked on the short 224-px clip only."""

import importlib.util
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location(
    "real_footage_tools", Path(__file__).resolve().parents[1] / "benchmarks" / "real_footage_tools.py")
rft = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(rft)


def _row(frames: int, width: int, cpu: float, wall: float) -> dict:
    return {"frames": frames, "size": [width * 3 // 4, width],
            **{name: {"cpu": cpu, "wall": wall} for name, _tool, _q in rft.CALLS}}


def test_table_puts_revisions_side_by_side_and_marks_slow_short_clip_calls():
    results = {
        "before": {"long.mp4": _row(250, 448, 2.0, 9.0), "short.mp4": _row(30, 224, 0.9, 3.0)},
        "after": {"long.mp4": _row(250, 448, 1.0, 4.0), "short.mp4": _row(30, 224, 0.25, 0.6)},
    }
    revs = {"before": "abc^", "after": "working tree"}
    cpu = rft.table(results, ["before", "after"], revs, "cpu").splitlines()
    assert cpu[0].startswith("Process CPU seconds per call") and "before = abc^, after = working tree" in cpu[0]
    assert cpu[2] == ("| tool call | long.mp4 (250 fr, 448 px) before / after | "
                      "short.mp4 (30 fr, 224 px) before / after |")
    assert cpu[4] == f"| {rft.CALLS[0][0]} | 2.00 / 1.00 | 0.90* / 0.25 |"  # only the short clip is bounded
    assert len(cpu) == 4 + len(rft.CALLS)
    wall = rft.table(results, ["before", "after"], revs, "wall").splitlines()
    assert wall[4] == f"| {rft.CALLS[0][0]} | 9.00 / 4.00 | 3.00* / 0.60* |"


def test_table_reads_an_older_child_s_plain_seconds():
    row = {"frames": 30, "size": [168, 224], **{name: 0.4 for name, _tool, _q in rft.CALLS}}
    lines = rft.table({"before": {"c.mp4": row}, "after": {"c.mp4": row}}, ["before", "after"],
                      {"before": "x", "after": "y"}, "cpu").splitlines()
    assert lines[4].endswith("| 0.40 / 0.40 |")


def test_rounds_keep_each_calls_fastest_cpu() -> None:
    a = {"clip.mp4": {"frames": 30, "size": [168, 224], "motion": {"cpu": 0.6, "wall": 0.9},
                      "reader": {"cpu": 0.2, "wall": 0.2}}}
    b = {"clip.mp4": {"frames": 30, "size": [168, 224], "motion": {"cpu": 0.5, "wall": 1.4},
                      "reader": {"cpu": 0.3, "wall": 0.25}}}
    got = rft._fastest(rft._fastest(None, a), b)
    assert got["clip.mp4"]["motion"] == {"cpu": 0.5, "wall": 1.4} and got["clip.mp4"]["reader"] == {"cpu": 0.2, "wall": 0.2}
    assert got["clip.mp4"]["frames"] == 30 and a["clip.mp4"]["motion"] == {"cpu": 0.6, "wall": 0.9}
