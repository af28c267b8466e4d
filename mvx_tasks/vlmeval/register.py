"""Put the MVX datasets and the SAMA model into VLMEvalKit's tables, in this process.

VLMEvalKit looks datasets up in ``vlmeval.dataset.DATASET_CLASSES`` (type and modality, via each
class's ``supported_datasets()``) and ``supported_video_datasets`` (constructors per frame
count), and models in ``vlmeval.config.supported_VLM``. Registration is idempotent.
"""
from __future__ import annotations

import importlib
import importlib.util
from functools import partial
from typing import Any, Callable

SAMA_PATH = "sama_model.adapters.vlmeval_model:build_model"  # BaseModel or BaseAPI by planner
#: Model names for SAMA and the keyword arguments each passes to its class.
SAMA_MODELS: dict[str, dict[str, Any]] = {
    "SAMA": {"profile": "paper-gpt"},
    "SAMA_offline": {"profile": "offline"},
    "SAMA_paper_deepseek": {"profile": "paper-deepseek"},
}


def register_datasets(limit: int | None = None) -> list[str]:
    """Register MVX_Bench / MVX_Synth and their 8- and 16-frame variants; returns the names.
    ``limit`` (questions per task) is bound into each constructor: the repository's ``run.py`` has
    no ``--limit`` to pass it (the PyPI build's passes its own, the same number, as a keyword)."""
    import vlmeval.dataset as vd
    from vlmeval.dataset import video_dataset_config as vdc

    from .dataset import MVXVideoMCQ
    from .names import dataset_names, frames_of

    if MVXVideoMCQ not in vd.DATASET_CLASSES:
        vd.DATASET_CLASSES.append(MVXVideoMCQ)
    names = dataset_names()
    for name in names:
        bound = {"limit": int(limit)} if limit is not None else {}
        vdc.supported_video_datasets[name] = partial(MVXVideoMCQ, dataset=name, nframe=frames_of(name), **bound)
        if name not in vd.SUPPORTED_DATASETS:
            vd.SUPPORTED_DATASETS.append(name)
    return names


def instantiate(path: str, **kwargs: Any) -> Any:
    """Import ``module:Class`` only when VLMEvalKit builds the model, then construct it."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)(**kwargs)


def register_model(name: str, factory: Callable[..., Any]) -> None:
    """Add one model constructor under ``name`` (e.g. a class, or a partial of :func:`instantiate`)."""
    from vlmeval.config import supported_VLM

    supported_VLM[name] = factory


def sama_available(path: str = SAMA_PATH) -> bool:
    module = path.partition(":")[0]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def register_models() -> list[str]:
    """Register the SAMA models lazily by class path when that module exists; returns the names."""
    if not sama_available():
        return []
    for name, kwargs in SAMA_MODELS.items():
        register_model(name, partial(instantiate, SAMA_PATH, **kwargs))
    return list(SAMA_MODELS)


def register(models: bool = True, limit: int | None = None) -> dict[str, list[str]]:
    """Register the datasets (``limit`` questions per task, if given) and (when importable) the SAMA models."""
    return {"datasets": register_datasets(limit), "models": register_models() if models else []}
