"""benchmarks/gpu_smoke.py: on a machine without CUDA it runs nothing and says how to run it (its
steps are run on CPU with --device cpu, results/gpu_smoke.md)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_without_cuda_it_says_so_and_exits_cleanly():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the smoke test would run")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_smoke.py")], capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "no CUDA device on this machine; nothing was run" in proc.stdout
    assert "--device cpu" in proc.stdout


def test_the_table_reports_every_step():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import gpu_smoke
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    steps = [gpu_smoke.Step("build", "ok", 46.2, "6 tool models"), gpu_smoke.Step("baseline", "FAIL", 3, "a|b")]
    assert gpu_smoke.table(steps).splitlines()[2:] == ["| build | ok | 46 | 6 tool models |",
                                                        "| baseline | FAIL | 3 | a/b |"]
    with pytest.raises(RuntimeError, match="did not run on the GPU"):
        gpu_smoke._check_peak("no peak line", "cuda")
    assert gpu_smoke._check_peak("MVX_SMOKE_CUDA_PEAK_MB 12.5\n", "cuda") == "; peak CUDA memory 12 MiB"
