"""Shared runtime for model backends: device/dtype choice, weight resolution, missing-weight errors.

Kept in one place so every backend picks the accelerator the same way (cuda > mps > cpu, bf16 on
CUDA, fp32 elsewhere) and a missing weight fails the same way: fast when offline, with a message
naming the weight, the backend and how to get it, instead of a multi-minute hub timeout.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable, TypeVar

__all__ = ["MissingWeightsError", "MissingPackageError", "select_device", "select_dtype", "hub_offline",
           "resolve_hf_weights", "looks_local", "SharedModels", "import_or_explain", "wrap_load_error", "MODELS"]

T = TypeVar("T")


class MissingWeightsError(RuntimeError):
    """A model weight that is neither a local path nor in the cache (and cannot be downloaded)."""

    def __init__(self, weight: str, backend: str, how: str, reason: str = "") -> None:
        self.weight, self.backend, self.how, self.reason = weight, backend, how, reason
        why = f" ({reason})" if reason else ""
        super().__init__(f"{backend}: model weight {weight!r} is not available{why}. {how}")


class MissingPackageError(ImportError):
    """An optional library a backend needs; the message names the pip package and the alternative."""


def import_or_explain(module: str, backend: str, pip_name: str, alternative: str = "") -> Any:
    """Import ``module`` or raise :class:`MissingPackageError` saying what to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        alt = f" or {alternative}" if alternative else ""
        raise MissingPackageError(f"{backend} needs the '{module}' module ({exc}); install it with "
                                  f"`pip install {pip_name}`{alt}") from exc


def select_device(device: str | None = "auto") -> str:
    """``auto`` -> cuda when present (this process's GPU, ``cuda:{LOCAL_RANK}``, under ``accelerate
    launch`` or torchrun), else mps, else cpu; explicit names pass through."""
    if device and device != "auto":
        return str(device)
    import torch

    if torch.cuda.is_available():
        local = os.environ.get("LOCAL_RANK")
        return f"cuda:{int(local)}" if local and local.isdigit() else "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def select_dtype(device: str, dtype: str | None = "auto"):
    """``auto`` -> bfloat16 on CUDA (what the paper's models are served in), float32 elsewhere."""
    import torch

    if dtype and dtype != "auto":
        return dtype if isinstance(dtype, torch.dtype) else getattr(torch, str(dtype).replace("torch.", ""))
    return torch.bfloat16 if str(device).startswith("cuda") else torch.float32


def hub_offline(local_files_only: bool = False) -> bool:
    """True when the hub must not be contacted (option or ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE``)."""
    if local_files_only:
        return True
    return any(os.environ.get(k, "").strip().lower() in {"1", "true", "yes", "on"}
               for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def looks_local(name: str) -> bool:
    """A path rather than a hub id: absolute, relative with ./ ../ ~, or existing on disk."""
    return name.startswith(("/", "./", "../", "~", ".\\")) or Path(name).expanduser().exists() or "\\" in name


def resolve_hf_weights(name: str, backend: str, *, local_files_only: bool = False,
                       option: str = "model") -> str:
    """Return a loadable path or hub id for ``name``, or raise :class:`MissingWeightsError` at once.

    Local folders are returned as they are. Hub ids are looked up in the HF cache; when offline and
    not cached the error names the ``huggingface-cli download`` command and the local-path option.
    Online and not cached, the id is returned so ``from_pretrained`` downloads it.
    """
    how = (f"Download it with `huggingface-cli download {name}` (on a machine with internet, then copy "
           f"the HF cache) or pass a local folder as the backend's `{option}` option.")
    if looks_local(name):
        p = Path(name).expanduser()
        if not p.exists():
            raise MissingWeightsError(name, backend, f"Pass an existing local folder or a hub id as `{option}`.",
                                      reason="no such local path")
        return str(p)
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(repo_id=name, local_files_only=True)
    except Exception as exc:  # not cached (LocalEntryNotFoundError) or a malformed id
        if hub_offline(local_files_only):
            raise MissingWeightsError(name, backend, how, reason="not in the Hugging Face cache and the hub "
                                      "is offline (HF_HUB_OFFLINE / local_files_only)") from exc
    return name


def wrap_load_error(name: str, backend: str, how: str, load: Callable[[], T]) -> T:
    """Run ``load``; turn a failing download/lookup into :class:`MissingWeightsError`."""
    try:
        return load()
    except MissingWeightsError:
        raise
    except OSError as exc:  # missing files / hub lookups (HF raises OSError subclasses)
        raise MissingWeightsError(name, backend, how, reason=f"{type(exc).__name__}: {str(exc)[:200]}") from exc


class SharedModels:
    """Process-wide, thread-safe lazy cache: each model loads once however many backends ask.

    ``maxsize`` bounds it (least recently used first out) for caches of per-video results.
    ``serial_loads``: loads of *different* keys run one at a time too (re-entrant, so a load may ask for
    another model). Why: building a model is not thread-safe across libraries. transformers builds
    weights on the meta device under process-global patches, so two models loaded at once in two threads
    (an LLM planner calling the reader and the detector in parallel, each loading on first use) come out
    with meta tensors: "Cannot copy out of meta tensor" in 7 of 10 trials with two tiny checkpoints.
    A load happens once per model and process, so serialising them costs nothing afterwards; caches of
    per-video results keep parallel computation (off).
    """

    def __init__(self, maxsize: int | None = None, serial_loads: bool = False) -> None:
        from collections import OrderedDict

        self.maxsize = maxsize
        self._items: "OrderedDict[tuple, Any]" = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[tuple, threading.Lock] = {}
        self._failed: dict[tuple, Exception] = {}
        self._serial = threading.RLock() if serial_loads else None

    def get(self, key: tuple, load: Callable[[], T]) -> T:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            if key in self._failed:  # a missing weight or package stays missing: fail at once
                raise self._failed[key]
        if self._serial is not None:
            with self._serial:  # taken before any key's lock: nested loads cannot deadlock
                return self._load(key, load)
        return self._load(key, load)

    def _load(self, key: tuple, load: Callable[[], T]) -> T:
        with self._lock:
            lock = self._key_locks.setdefault(key, threading.Lock())
        with lock:  # one load per key even when several threads ask at once
            with self._lock:
                if key in self._items:
                    return self._items[key]
                if key in self._failed:
                    raise self._failed[key]
            try:
                value = load()
            except (MissingWeightsError, MissingPackageError) as exc:
                with self._lock:
                    self._failed[key] = exc
                raise
            with self._lock:
                self._items[key] = value
                self._key_locks.pop(key, None)
                while self.maxsize and len(self._items) > self.maxsize:
                    self._items.popitem(last=False)
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._failed.clear()


MODELS = SharedModels(serial_loads=True)
