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

PROTOCOLS = contracts.CONTRACTS
MODEL_ROWS = sorted(k for k, v in _LAZY.items() if v.startswith("sama_model.backends.models."))


@pytest.mark.parametrize("tool,name", MODEL_ROWS)
def test_registry_rows_resolve_and_build_lazily(tool, name):
    cls = resolve_backend(tool, name)
    backend = cls(device="cpu") if "device" in cls.__init__.__code__.co_varnames else cls()
    assert isinstance(backend, PROTOCOLS[tool])  # construction loads nothing: models load on first use


def test_device_and_dtype_rules(monkeypatch):
    assert _runtime.select_device("cpu") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    assert _runtime.select_device("auto") == "cuda"
    monkeypatch.setenv("LOCAL_RANK", "1")  # accelerate launch / torchrun: this process's GPU
    assert _runtime.select_device("auto") == "cuda:1"
    monkeypatch.delenv("LOCAL_RANK")
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


def _overlap(cache: _runtime.SharedModels) -> int:
    """How many loads of different keys ran at the same moment, two threads asking at once."""
    import threading
    import time

    live, most, guard = [0], [0], threading.Lock()
    both = threading.Barrier(2)

    def load(key: str) -> str:
        with guard:
            live[0] += 1
            most[0] = max(most[0], live[0])
        time.sleep(0.2)  # a load takes a while: the other thread is asking meanwhile
        with guard:
            live[0] -= 1
        return key

    def ask(key: str) -> None:
        both.wait()
        cache.get((key,), lambda: load(key))

    threads = [threading.Thread(target=ask, args=(k,)) for k in ("reader", "detector")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return most[0]


def test_model_loads_run_one_at_a_time_and_may_nest():
    # per-video result caches compute in parallel; the model cache loads one model at a time (two
    # transformers models built at once in two threads come out with meta tensors)
    assert _overlap(_runtime.SharedModels()) == 2
    assert _overlap(_runtime.SharedModels(serial_loads=True)) == 1
    assert _runtime.MODELS._serial is not None
    # a load may ask for another model (an encoder built from a CLIP model) without deadlocking
    cache = _runtime.SharedModels(serial_loads=True)
    assert cache.get(("encoder",), lambda: ("enc", cache.get(("clip",), lambda: "clip"))) == ("enc", "clip")


@pytest.mark.slow
def test_two_tiny_hf_models_loaded_at_once_through_the_cache(tmp_path):
    """The real failure: the Qwen2.5-VL reader and GroundingDINO loaded at the same time in two threads
    (a planner calling both tools in one turn) left meta tensors in 7 of 10 tries without serial loads."""
    import threading

    import tiny_models as T
    from transformers import AutoModelForImageTextToText, AutoModelForZeroShotObjectDetection

    qwen = T.build_tiny_qwen2_5_vl(tmp_path / "qwen")
    dino = T.build_tiny_grounding_dino(tmp_path / "dino")
    errors: list[str] = []
    for trial in range(3):
        cache = _runtime.SharedModels(serial_loads=True)
        both = threading.Barrier(2)

        def load(cls, path, trial=trial, cache=cache, both=both):
            both.wait()
            try:
                cache.get((str(path), trial), lambda: cls.from_pretrained(path)).to("cpu")
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=load, args=(AutoModelForImageTextToText, qwen)),
                   threading.Thread(target=load, args=(AutoModelForZeroShotObjectDetection, dino))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
