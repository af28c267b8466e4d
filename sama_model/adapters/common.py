"""What both harness adapters share: building the agent from model arguments and default folders."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from ..agent import SamaAgent
from ..atomic import check_writable
from ..profiles import AgentConfig, ConfigError, build_config
from ..tools.backends import BackendOptionError, validate_backends

DEFAULT_TRACE_ROOT = "sama_traces"


def output_path_from_argv(argv: list[str] | None = None) -> str | None:
    """The harness's ``--output_path`` (lmms-eval) or ``--work-dir`` (VLMEvalKit), if given."""
    argv = sys.argv if argv is None else argv
    for flag in ("--output_path", "--work-dir", "--work_dir"):
        for i, a in enumerate(argv):
            if a == flag and i + 1 < len(argv):
                return argv[i + 1]
            if a.startswith(flag + "="):
                return a.split("=", 1)[1]
    return None


def default_trace_dir(config: AgentConfig, output_path: str | None) -> Path:
    """``<output_path>/sama_traces/<planner>-<fingerprint>`` (``./sama_traces/...`` without one): a
    separate folder per configuration, so ablations never overwrite each other's traces."""
    root = Path(output_path) / DEFAULT_TRACE_ROOT if output_path else Path(DEFAULT_TRACE_ROOT)
    return root / f"{config.planner}-{config.fingerprint()}"


def default_cache_dir() -> Path:
    """Tool results are shared across runs and ablations: ``$SAMA_CACHE_DIR`` or ``~/.cache/sama/tools``."""
    return Path(os.environ.get("SAMA_CACHE_DIR") or Path.home() / ".cache" / "sama" / "tools")


def check_backends(config: AgentConfig) -> None:
    """Every ``backend.<tool>.<option>`` checked against the chosen backend's parameters (and each
    backend built, which loads no weights); deprecated option names are reported once."""
    try:
        notes = validate_backends(config.active_backends())
    except BackendOptionError as exc:
        raise ConfigError(str(exc)) from None
    for note in notes:
        print(f"SAMA: {note}", file=sys.stderr, flush=True)


def make_agent(model_args: dict[str, Any]) -> tuple[SamaAgent, Path]:
    """(agent, trace folder) from harness model arguments."""
    args = dict(model_args)
    cache_given = "cache_dir" in args
    config = build_config(**args)
    check_backends(config)  # before any folder or trace is written, before any question runs
    if not cache_given:
        config.cache_dir = str(default_cache_dir())
    trace_dir = Path(config.trace_dir) if config.trace_dir else default_trace_dir(config, output_path_from_argv())
    check_writable(trace_dir, "SAMA traces", "pass trace_dir=<a writable folder with free space> in the model "
                                             "arguments (or another --output_path)")
    return SamaAgent(config), trace_dir
