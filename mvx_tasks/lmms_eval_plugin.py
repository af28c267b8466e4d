"""The plugin's entry into lmms-eval: the `sama` model manifest and task discovery with no flags.

lmms-eval finds plugin models through the ``lmms_eval.models`` entry-point group, but it only
finds task folders given with ``--include_path``. Its CLI loads the model entry points (importing
``lmms_eval.models``) before it builds its ``TaskManager``, so this entry-point callable also
extends ``TaskManager.initialize_tasks`` with this package's task folder. That depends on
lmms-eval's import order, so a test runs the real CLI; ``--include_path $(mvx-bench tasks-path)``
remains the documented fallback.
"""
from __future__ import annotations

from pathlib import Path

TASKS_DIR = str(Path(__file__).resolve().parent / "tasks")


def extend_task_paths() -> bool:
    """Make every TaskManager index this package's tasks (idempotent). True when patched."""
    try:
        from lmms_eval.tasks import TaskManager
    except Exception:  # lmms-eval absent or mid-import: --include_path still works
        return False
    original = TaskManager.initialize_tasks
    if getattr(original, "_mvx_patched", False):
        return True

    def initialize_tasks(self, include_path=None, include_defaults=True):
        paths = [] if include_path is None else ([include_path] if isinstance(include_path, str) else list(include_path))
        if not any(Path(p).resolve() == Path(TASKS_DIR) for p in paths):
            paths.append(TASKS_DIR)
        return original(self, include_path=paths, include_defaults=include_defaults)

    initialize_tasks._mvx_patched = True  # type: ignore[attr-defined]
    initialize_tasks.__doc__ = original.__doc__
    TaskManager.initialize_tasks = initialize_tasks
    return True


def models():
    """Entry point (``lmms_eval.models``): the SAMA and baseline-adapter manifests, plus MVX task discovery."""
    extend_task_paths()
    return [sama_manifest(), hf_chat_manifest(), replay_manifest()]


def sama_manifest():
    """``--model sama``: a chat model (it reads each request's messages, like any MLLM)."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(model_id="sama", chat_class_path="sama_model.adapters.lmms_eval_model.SAMA")


def hf_chat_manifest():
    """``--model mvx_hf_chat``: the baselines' transformers chat adapter (every video, labelled, N frames)."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(model_id="mvx_hf_chat", chat_class_path="mvx_tasks.baselines.hf_chat.HFChat")


def replay_manifest():
    """``--model mvx_replay``: an earlier run's logged answers, scored again with their figures."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(model_id="mvx_replay", chat_class_path="mvx_tasks.replay.Replay")
