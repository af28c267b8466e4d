"""The agent's entry into lmms-eval: the ``sama`` model manifest (entry-point group ``lmms_eval.models``).

Declared here, not in the benchmark package, so that MVX-Bench installs and runs for any model
without the agent; the benchmark's own entry point (``mvx_tasks.lmms_eval_plugin``) declares the
baselines' ``mvx_hf_chat`` and the task folder.
"""
from __future__ import annotations

SAMA_CLASS = "sama_model.adapters.lmms_eval_model.SAMA"


def sama_manifest():
    """``--model sama``: a chat model (it reads each request's messages, like any MLLM)."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(model_id="sama", chat_class_path=SAMA_CLASS)


def models():
    """Entry point (``lmms_eval.models``): lmms-eval calls it while it builds its model registry."""
    from mvx_tasks.lmms_eval_plugin import extend_task_paths

    extend_task_paths()  # the MVX tasks too, whichever plugin lmms-eval loads first
    return [sama_manifest()]
