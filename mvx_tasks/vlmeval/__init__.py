"""MVX-Bench and MVX-Synth for VLMEvalKit (``ms-vlmeval``), registered in-process.

VLMEvalKit has no plugin mechanism: :func:`register` mutates its dataset and model tables in
this process, and :func:`run_vlmeval` then calls its runner (``vlmeval.run``) in the same
process. Importing this package does not import VLMEvalKit (about 10 s); the submodules do.
"""
from __future__ import annotations

from .names import DATASET_ENV, FRAME_VARIANTS, base_name, dataset_names, frames_of

# The function, bound once the submodule of the same name is loaded (its own import is light: it
# imports VLMEvalKit only when called); a lazy wrapper here would be replaced by the submodule as
# soon as anything imported ``mvx_tasks.vlmeval.register``.
from .register import register

__all__ = ["DATASET_ENV", "FRAME_VARIANTS", "base_name", "dataset_names", "frames_of", "register", "run_vlmeval"]


def run_vlmeval(*args, **kwargs) -> int:
    """See :func:`mvx_tasks.vlmeval.launch.run_vlmeval` (imports VLMEvalKit)."""
    from .launch import run_vlmeval as _run

    return _run(*args, **kwargs)
