"""Named configurations (offline, paper-gpt, paper-deepseek) as data, and the model-argument
parser that turns harness ``key=value`` strings into an :class:`AgentConfig`.

Model arguments understood (all optional)::

    profile=offline|paper-gpt|paper-deepseek
    planner=scripted|openai|hf   model=..  base_url=..  api_key_env=..  (and any planner.<option>=..)
    max_iterations=10  skills=on|off  conflict=on|off  aggregation=on|off  motion=on|off  task_hint=off|on
    reread_rounds=2  workers=4  cache_dir=..  trace_dir=..
    backend.<tool>=<backend name>|off   backend.<tool>.<option>=<value>
    max_cost_usd=5.0  max_tokens_run=2000000  prices=<price YAML>   (budget and price table; see
    sama_model/budget.py: not part of the fingerprint, so a rerun with a higher budget resumes)
"""
from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from .tools import TOOL_CLASSES
from .tools.backends import TOOL_NAMES
from .tools.base import BackendSpec

PROFILE_FILE = Path(__file__).with_name("profiles.yaml")
DEFAULT_PROFILE = "offline"
#: a profile's kind when it names none: which default backend each tool takes (see :func:`load_profile`)
DEFAULT_KIND = "offline"
#: short planner arguments accepted at top level
PLANNER_KEYS = ("model", "base_url", "api_key_env", "timeout", "max_retries", "backoff", "backoff_max",
                "temperature", "seed", "max_tokens", "max_completion_tokens", "reasoning_effort", "max_new_tokens",
                "gguf_file", "device_planner")
#: run bookkeeping that never changes an answer (left out of the fingerprint)
RUN_KEYS = ("workers", "cache_dir", "trace_dir", "profile", "max_cost_usd", "max_tokens_run", "prices")
#: harness arguments that are accepted and ignored
IGNORED_KEYS = ("batch_size", "device", "max_batch_size", "device_map")


class ConfigError(ValueError):
    """A model argument SAMA does not understand; the message lists what it does."""


@dataclass
class AgentConfig:
    """Everything that determines how SAMA answers (and, minus bookkeeping, its fingerprint)."""

    profile: str = DEFAULT_PROFILE
    planner: str = "scripted"
    planner_options: dict[str, Any] = field(default_factory=dict)
    backends: dict[str, BackendSpec | None] = field(default_factory=dict)
    max_iterations: int = 10
    skills: bool = True
    conflict: bool = True
    aggregation: bool = True
    motion: bool = True
    reread_rounds: int = 2
    #: give the agent the harness's MVX task code (off: it identifies the type from the text, like the paper)
    task_hint: bool = False
    workers: int = 4
    cache_dir: str | None = None
    trace_dir: str | None = None
    #: stop starting questions once the run's traces add up to this many dollars / tokens
    max_cost_usd: float | None = None
    max_tokens_run: int | None = None
    #: a YAML price file overriding sama_model/prices.yaml
    prices: str | None = None

    def active_backends(self) -> dict[str, BackendSpec | None]:
        """Backends in use: motion off removes motion_analyzer."""
        out = dict(self.backends)
        if not self.motion:
            out["motion_analyzer"] = None
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["backends"] = {k: (v.to_dict() if v else None) for k, v in self.active_backends().items()}
        return d

    def fingerprint(self) -> str:
        """Hash of the behaviour-relevant settings: a finished trace is reused only under the same one."""
        d = self.to_dict()
        for k in RUN_KEYS:
            d.pop(k)
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:16]


@lru_cache(maxsize=1)
def _raw_profiles() -> dict[str, Any]:
    data = yaml.safe_load(PROFILE_FILE.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ConfigError(f"{PROFILE_FILE} must map profile names to settings")
    return data


def profile_names() -> list[str]:
    return list(_raw_profiles())


def profile_kinds() -> list[str]:
    """The profile kinds the tools declare default backends for (``offline``, ``paper``)."""
    return sorted({kind for cls in TOOL_CLASSES.values() for kind in cls.default_backends})


def _settings(name: str) -> dict[str, Any]:
    """A profile's own settings with ``extends`` applied: the child's keys win, and its ``backends`` entries
    win tool by tool over its parent's."""
    profiles = _raw_profiles()
    if name not in profiles:
        raise ConfigError(f"unknown profile {name!r}; profiles: {', '.join(profiles)}")
    data = copy.deepcopy(profiles[name])
    parent = data.pop("extends", None)
    if parent:
        base = _settings(parent)
        backends = {**(base.get("backends") or {}), **(data.get("backends") or {})}
        base.update(data)
        if backends:
            base["backends"] = backends
        data = base
    return data


def load_profile(name: str) -> dict[str, Any]:
    """A profile's settings with ``extends`` applied and ``backends`` filled in for every tool: the profile's own
    entry (``null`` = off), else the tool's default backend for the profile's ``kind`` (the tool class's
    ``default_backends``; off when the tool declares none for that kind). So a new tool needs no profile entry."""
    data = _settings(name)
    kind = str(data.get("kind", DEFAULT_KIND))
    if kind not in profile_kinds():
        raise ConfigError(f"profile {name!r}: unknown kind {kind!r}; kinds the tools declare: {', '.join(profile_kinds())}")
    given = data.get("backends") or {}
    unknown = sorted(set(given) - set(TOOL_CLASSES))
    if unknown:
        raise ConfigError(f"profile {name!r}: backends for unknown tools {unknown}; tools: {', '.join(TOOL_CLASSES)}")
    backends: dict[str, Any] = {}
    for tool, cls in TOOL_CLASSES.items():
        if tool in given:
            backends[tool] = given[tool]
        else:
            default = cls.default_backends.get(kind)
            backends[tool] = default.to_dict() if default is not None else None
    data["kind"], data["backends"] = kind, backends
    return data


def parse_bool(value: Any, key: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "on", "yes"):
        return True
    if text in ("0", "false", "off", "no"):
        return False
    raise ConfigError(f"{key}={value!r}: use on or off")


def _value(v: Any) -> Any:
    """Harness strings to Python values for backend/planner options (JSON literals when they parse)."""
    if isinstance(v, str):
        try:
            return json.loads(v)
        except json.JSONDecodeError:
            return v
    return v


def build_config(**args: Any) -> AgentConfig:
    """An :class:`AgentConfig` from a profile plus overrides (harness model arguments)."""
    args = {k: v for k, v in args.items() if k not in IGNORED_KEYS}
    prof_name = str(args.pop("profile", DEFAULT_PROFILE))
    prof = load_profile(prof_name)
    planner_cfg = dict(prof.get("planner") or {"name": "scripted"})
    planner = str(args.pop("planner", planner_cfg.pop("name")))
    if planner != (prof.get("planner") or {}).get("name"):
        planner_cfg = {}  # another planner than the profile's: its options do not apply
    planner_cfg.pop("name", None)
    cfg = AgentConfig(profile=prof_name, planner=planner, motion=bool(prof.get("motion", True)))
    backends: dict[str, BackendSpec | None] = {}
    for tool in TOOL_NAMES:
        b = (prof.get("backends") or {}).get(tool)
        backends[tool] = BackendSpec(str(b["name"]), dict(b.get("options") or {})) if b else None
    backend_opts: dict[str, dict[str, Any]] = {}
    for key, value in args.items():
        if key in PLANNER_KEYS:
            planner_cfg[key.replace("device_planner", "device")] = _value(value) if key != "model" else str(value)
        elif key.startswith("planner."):
            planner_cfg[key[len("planner."):]] = _value(value)
        elif key.startswith("backend."):
            parts = key.split(".", 2)
            if parts[1] not in TOOL_NAMES:
                raise ConfigError(f"{key}: unknown tool {parts[1]!r}; tools: {', '.join(TOOL_NAMES)}")
            if len(parts) == 2:
                name = str(value).strip()
                backends[parts[1]] = None if name.lower() in ("off", "none", "") else BackendSpec(name, {})
            else:
                backend_opts.setdefault(parts[1], {})[parts[2]] = _value(value)
        elif key in ("skills", "conflict", "aggregation", "motion", "task_hint"):
            setattr(cfg, key, parse_bool(value, key))
        elif key in ("max_iterations", "reread_rounds", "workers"):
            try:
                setattr(cfg, key, int(value))
            except (TypeError, ValueError):
                raise ConfigError(f"{key}={value!r} must be an integer") from None
        elif key in ("cache_dir", "trace_dir", "prices"):
            setattr(cfg, key, None if value in (None, "", "none") else str(value))
        elif key in ("max_cost_usd", "max_tokens_run"):
            try:
                limit = (float if key == "max_cost_usd" else int)(value)
            except (TypeError, ValueError):
                raise ConfigError(f"{key}={value!r} must be a number") from None
            if limit < 0:
                raise ConfigError(f"{key}={value!r} must not be negative")
            setattr(cfg, key, limit)
        else:
            raise ConfigError(f"unknown SAMA model argument {key!r}; known: profile, planner, "
                              f"{', '.join(PLANNER_KEYS)}, planner.<opt>, max_iterations, skills, conflict, "
                              f"aggregation, motion, task_hint, reread_rounds, workers, cache_dir, trace_dir, "
                              f"max_cost_usd, max_tokens_run, prices, backend.<tool>, backend.<tool>.<opt>")
    for tool, opts in backend_opts.items():
        spec = backends.get(tool)
        if spec is None:
            raise ConfigError(f"backend options for {tool} given but {tool} is switched off")
        backends[tool] = BackendSpec(spec.name, {**spec.options, **opts})
    if args.get("motion") is not None and cfg.motion and backends.get("motion_analyzer") is None:
        raise ConfigError("motion=on needs a motion_analyzer backend, e.g. backend.motion_analyzer=lite")
    if cfg.max_iterations < 1:
        raise ConfigError("max_iterations must be at least 1")
    cfg.planner_options, cfg.backends = planner_cfg, backends
    return cfg
