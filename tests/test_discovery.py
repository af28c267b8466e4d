"""Task discovery without a copied signature, the data-files shim for older lmms-eval releases, and
what lmms-eval resolves of the plugin (``mvx-bench models``, ``mvx-bench tasks --lmms``)."""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mvx_tasks.lmms_eval_plugin import (
    TASKS_DIR,
    UnsupportedUpstream,
    anchored_data_files,
    plugin_models,
    with_task_folder,
)


def _upstream_initialize_tasks():
    from lmms_eval.tasks import TaskManager

    method = TaskManager.initialize_tasks
    return inspect.unwrap(method)


def test_upstream_method_still_takes_include_path():
    """Fails when lmms-eval changes ``initialize_tasks`` so that the wrapper cannot extend the task folders:
    then `lmms-eval eval` without --include_path stops finding the MVX tasks (the fix: adapt the wrapper)."""
    original = _upstream_initialize_tasks()
    param = inspect.signature(original).parameters.get("include_path")
    assert param is not None and param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY)
    wrapped = with_task_folder(original, "/x/tasks")
    assert inspect.signature(wrapped) == inspect.signature(original)  # functools.wraps: nothing copied
    assert wrapped.__wrapped__ is original and wrapped.__doc__ == original.__doc__


def test_the_real_task_manager_indexes_the_mvx_tasks_without_a_flag():
    from lmms_eval.tasks import TaskManager

    from mvx_tasks.lmms_eval_plugin import extend_task_paths

    assert extend_task_paths()
    assert getattr(TaskManager.initialize_tasks, "_mvx_patched", False)
    index = TaskManager("ERROR").task_index
    assert index["mvx_synth_spr"]["yaml_path"].startswith(TASKS_DIR)
    assert index["mvx_bench"]["type"] == "group"
    assert extend_task_paths()  # idempotent: wrapped once
    assert not getattr(inspect.unwrap(TaskManager.initialize_tasks), "_mvx_patched", False)


class _Upstream:
    """Stand-ins for future lmms-eval signatures."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def grown(self, include_path=None, include_defaults=True, new_flag=False, *, extra_kw="k"):
        self.calls.append((include_path, include_defaults, new_flag, extra_kw))
        return "ok"

    def keyword_only(self, *, include_path=None):
        self.calls.append((include_path,))

    def renamed(self, paths=None, include_defaults=True):
        pass

    def opaque(self, *args, **kwargs):
        pass


@pytest.mark.parametrize("given,expected", [
    (((), {}), [["/t"], True, False, "k"]),
    ((("a",), {}), [["a", "/t"], True, False, "k"]),
    ((([Path("/t")], False, True), {"extra_kw": "z"}), [[Path("/t")], False, True, "z"]),  # already there: once
    (((), {"include_path": ["a", "b"], "new_flag": True}), [["a", "b", "/t"], True, True, "k"]),
])
def test_wrapper_forwards_any_new_parameter(given, expected):
    up = _Upstream()
    args, kwargs = given
    assert with_task_folder(_Upstream.grown, "/t")(up, *args, **kwargs) == "ok"
    assert list(up.calls[-1]) == expected


def test_wrapper_keeps_keyword_only_include_path():
    up = _Upstream()
    with_task_folder(_Upstream.keyword_only, "/t")(up, include_path="a")
    assert up.calls == [(["a", "/t"],)]


@pytest.mark.parametrize("method", [_Upstream.renamed, _Upstream.opaque])
def test_a_method_without_include_path_is_refused_with_the_fallback(method):
    with pytest.raises(UnsupportedUpstream, match=r'--include_path "\$\(mvx-bench tasks-path\)"'):
        with_task_folder(method, "/t")


def test_data_files_are_anchored_only_where_the_file_is(tmp_path):
    (tmp_path / "_placeholder.jsonl").write_text("")
    cfg = {"dataset_path": "json", "dataset_kwargs": {"data_files": {"test": "_placeholder.jsonl", "x": "gone.jsonl"},
                                                      "video": True}}
    out = anchored_data_files(cfg, tmp_path)
    assert out["dataset_kwargs"] == {"data_files": {"test": str(tmp_path / "_placeholder.jsonl"), "x": "gone.jsonl"},
                                     "video": True}
    hub = {"dataset_path": "lmms-lab/x", "dataset_kwargs": {"data_files": "_placeholder.jsonl"}}
    assert anchored_data_files(hub, tmp_path) is hub


def test_plugin_models_come_from_the_entry_points():
    models = plugin_models()
    assert models["sama"]["class_path"] == "sama_model.adapters.lmms_eval_model.SAMA"
    assert models["sama"]["entry_point"] == "sama_model.lmms_eval_plugin:models"
    assert models["mvx_hf_chat"]["entry_point"] == "mvx_tasks.lmms_eval_plugin:models"
    assert all(not m.startswith("!") for m in models)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mvx_tasks.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=600)


@pytest.mark.slow
def test_models_and_lmms_tasks_commands_show_what_lmms_eval_resolves(tmp_path):
    proc = _cli("models", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    models = json.loads(proc.stdout)
    assert {m: e["lmms_eval_resolves"] for m, e in models.items()} == {"sama": True, "mvx_hf_chat": True, "mvx_replay": True}
    proc = _cli("tasks", "--lmms", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    listed = [x.strip() for x in proc.stdout.splitlines() if x.startswith("  ")]
    assert {"mvx_bench", "mvx_bench_spr", "mvx_synth_spr", "mvx_bench_frames"} <= set(listed)
    assert proc.stdout.startswith(f"lmms-eval indexes {len(listed)} names from {TASKS_DIR}")
