"""What lmms-eval itself sees of the plugin: ``mvx-bench tasks --lmms`` and ``mvx-bench models``.

``lmms-eval tasks list`` indexes only its own folder and ``--include-path``, and ``lmms-eval models``
prints only its built-in tables, so neither shows this plugin (docs/discovery.md). These two commands
ask lmms-eval's own objects instead: its ``TaskManager`` built on this package's task folder, and its
model registry (``lmms_eval.models``), which holds the entry-point manifests.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .lmms_eval_plugin import TASKS_DIR, plugin_models


def lmms_task_index() -> dict[str, dict[str, str]]:
    """The names lmms-eval's TaskManager indexes from this package's task folder, with their type
    (task or group) and YAML file."""
    from lmms_eval.tasks import TaskManager

    try:  # lmms-eval logs through loguru, at DEBUG until its model registry is imported
        from loguru import logger

        logger.remove()
        logger.add(sys.stderr, level="WARNING")
    except ImportError:
        pass
    tm = TaskManager("WARNING", include_path=TASKS_DIR)
    index = getattr(tm, "task_index", None) or tm._task_index
    root = Path(TASKS_DIR).resolve()
    out = {}
    for name, entry in index.items():
        yaml_path = entry.get("yaml_path")
        if isinstance(yaml_path, (str, Path)) and Path(yaml_path).resolve().is_relative_to(root):
            out[name] = {"type": str(entry.get("type")), "yaml_path": str(yaml_path)}
    return out


def cmd_lmms_tasks(args: argparse.Namespace) -> int:
    index = lmms_task_index()
    by_type: dict[str, list[str]] = {}
    for name, entry in sorted(index.items()):
        by_type.setdefault(entry["type"], []).append(name)
    print(f"lmms-eval indexes {len(index)} names from {TASKS_DIR}: "
          + ", ".join(f"{len(v)} {k}s" for k, v in sorted(by_type.items())))
    for kind, names in sorted(by_type.items()):
        print(f"\n{kind}s:")
        for name in names:
            print(f"  {name}")
    return 0 if index else 1


def add_models_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("--json", action="store_true", help="print the listing as JSON")


def resolved_models() -> dict[str, dict[str, object]]:
    """Each plugin model and whether lmms-eval's own registry resolves it to the same class."""
    from lmms_eval.models import get_model_manifest

    out = plugin_models()
    for model_id, entry in out.items():
        if model_id.startswith("!"):
            continue
        try:
            m = get_model_manifest(model_id)
            entry["lmms_eval_resolves"] = (m.chat_class_path or m.simple_class_path) == entry["class_path"]
        except (KeyError, ValueError):
            entry["lmms_eval_resolves"] = False
    return out


def cmd_models(args: argparse.Namespace) -> int:
    models = resolved_models()
    if args.json:
        print(json.dumps(models, indent=1))
    else:
        print(f"{'model':<14}{'kind':<8}{'lmms-eval resolves it':<24}{'class':<48}plugin")
        for model_id, e in sorted(models.items()):
            if model_id.startswith("!"):
                print(f"{model_id[1:]:<14}{'-':<8}{'NO: failed to load':<24}{e['error']:<48}{e['entry_point']}")
                continue
            print(f"{model_id:<14}{e['kind']:<8}{'yes' if e['lmms_eval_resolves'] else 'NO':<24}{e['class_path']:<48}"
                  f"{e['dist']} ({e['entry_point']})")
        print("\n(`lmms-eval models` lists only lmms-eval's built-in models; `lmms-eval --model <model>` uses these.)")
    bad = [m for m, e in models.items() if m.startswith("!") or not e.get("lmms_eval_resolves")]
    return 1 if bad or not models else 0
