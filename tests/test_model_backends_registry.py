"""Every model backend row of the registry imports and satisfies its tool's contract; device rules."""
from __future__ import annotations

import os
import tempfile

import pytest
import torch

os.environ.setdefault("YOLO_CONFIG_DIR", tempfile.mkdtemp(prefix="yolo-cfg-"))

from sama_model.backends.models import _runtime  # noqa: E402
from sama_model.tools import contracts  # noqa: E402
from sama_model.tools.backends import _LAZY, resolve_backend  # noqa: E402

PROTOCOLS = {"video_reader": contracts.VideoReaderBackend, "temporal_grounding": contracts.TemporalGroundingBackend,
             "scene_graph": contracts.SceneGraphBackend, "object_tracker": contracts.ObjectTrackerBackend,
             "visual_similarity": contracts.VisualSimilarityBackend, "subtitle_retriever": contracts.SubtitleBackend}
MODEL_ROWS = sorted(k for k, v in _LAZY.items() if v.startswith("sama_model.backends.models."))


@pytest.mark.parametrize("tool,name", MODEL_ROWS)
def test_registry_rows_resolve_and_build_lazily(tool, name):
    cls = resolve_backend(tool, name)
    backend = cls(device="cpu") if "device" in cls.__init__.__code__.co_varnames else cls()
    assert isinstance(backend, PROTOCOLS[tool])  # construction loads nothing: models load on first use


def test_device_and_dtype_rules(monkeypatch):
    assert _runtime.select_device("cpu") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert _runtime.select_device("auto") == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert _runtime.select_device("auto") == "cpu"
    assert _runtime.select_dtype("cuda") is torch.bfloat16
    assert _runtime.select_dtype("cpu") is torch.float32
    assert _runtime.select_dtype("cuda", "float16") is torch.float16


def test_shared_models_load_once_and_evict():
    cache = _runtime.SharedModels(maxsize=2)
    calls = []
    for key in ["a", "a", "b", "a", "c", "b"]:
        cache.get((key,), lambda k=key: calls.append(k) or k.upper())
    assert calls == ["a", "b", "c", "b"]  # "a" was used after "b", so "c" evicted "b", which then reloaded
    assert cache.get(("b",), lambda: "reloaded") == "B"
    assert cache.get(("a",), lambda: "reloaded") == "reloaded"  # "b" reloading evicted "a"
