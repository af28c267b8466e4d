"""One direction between the two packages: the benchmark (mvx_tasks) never imports the agent (sama_model),
so MVX-Bench works for any model without it; the agent's commands reach ``mvx-bench`` through the
``mvx_bench.commands`` entry point. (Issue 62's full import-graph test, cycles included, supersedes the
first test here.)"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module an ``import`` names in the file, at any depth (function bodies included)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
    return out


def test_nothing_in_mvx_tasks_imports_sama_model():
    bad = [f"{p.relative_to(REPO)}:{line} imports {name}" for p in sorted((REPO / "mvx_tasks").rglob("*.py"))
           for line, name in _imports(p) if name == "sama_model" or name.startswith("sama_model.")]
    assert bad == []


_WITHOUT_AGENT = """
import sys
sys.modules["sama_model"] = None  # the agent is not installed: any import of it fails
from mvx_tasks.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _bench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _WITHOUT_AGENT, *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=300)


def test_the_benchmark_commands_work_without_the_agent(tmp_path):
    proc = _bench("run", "qwen2_5_vl_7b", "gpt_4o", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "--model qwen2_5_vl --model_args pretrained=Qwen/Qwen2.5-VL-7B-Instruct" in proc.stdout
    assert "warning: mvx-bench commands of sama_model.commands:register not loaded" in proc.stderr
    proc = _bench("tasks", cwd=tmp_path)
    assert proc.returncode == 0 and "SPR" in proc.stdout
    proc = _bench("demo", "--help", cwd=tmp_path)
    assert proc.returncode == 2 and "invalid choice: 'demo'" in proc.stderr


def test_the_agent_commands_come_through_the_entry_point(tmp_path):
    from mvx_tasks.cli import build_parser, plugin_commands
    from sama_model.commands import register

    assert register in plugin_commands()
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert {"demo", "summary", "estimate", "trace"} <= set(sub.choices)
    assert sub.choices["demo"].get_default("func").__module__ == "sama_model.commands"
