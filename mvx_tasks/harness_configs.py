"""Baseline and SAMA run configs (``harness_configs/*.yaml``): load, validate, launch lmms-eval.

One YAML per Table 1 row says which lmms-eval adapter runs the model, with which hub id, frame
budget and generation settings, and which task group it uses. The route matters: several
built-in adapters silently keep only the first video (see docs/leaderboard.md, "Routes"), so a
config either uses an adapter that really receives every video (``route: video``, group
``mvx_bench``) or gets each video as labelled frame images (``route: frames``, group
``mvx_bench_frames``). Validation refuses a config whose route and group disagree.
"""
from __future__ import annotations

import argparse
import csv
import importlib
import importlib.util
import inspect
import json
import os
import shlex
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import yaml

from .lmms_eval_plugin import model_args_validator, plugin_models
from .package_data import config_dir, paper_table, tasks_dir
from .run_outcome import RunWatch

#: Read through the package (mvx_tasks/package_data.py), so an installed wheel finds them: the run
#: configs ($MVX_CONFIG_DIR, else the shipped harness_configs/), Table 1 ($MVX_PAPER_TABLE, else the
#: shipped copy of results/paper_table1.csv) and the lmms-eval task folder.
CONFIG_DIR = config_dir()
PAPER_TABLE = paper_table()
TASKS_DIR = tasks_dir()
RUN_SIDECAR = "mvx_run.json"  # written next to a run's lmms-eval output: which config produced it

ROUTE_GROUPS = {"video": "mvx_bench", "frames": "mvx_bench_frames", "agent": "mvx_bench"}
SYNTH_GROUPS = {"video": "mvx_synth", "frames": "mvx_synth", "agent": "mvx_synth"}
#: Adapters whose constructor hands its unknown keywords to an engine (checked there, not here).
ENGINE_KWARGS = {"vllm": "vllm.LLM (e.g. limit_mm_per_prompt)"}
#: Adapter arguments that set frames per video (each adapter names it its own way).
FRAME_ARGS = ("frames_per_video", "max_num_frames", "max_frames_num", "num_frames", "max_frame_num")
REQUIRED = ("name", "model", "model_args", "route", "route_reason", "tasks", "frames_per_video", "generation")
OPTIONAL = ("paper_row", "class_path", "seed", "batch_size", "notes", "paper_ablation", "env", "architecture",
            "offline_reason")


def route_groups(route: str) -> list[str]:
    """The task groups a route may run: MVX-Bench's (or MVX-Synth), then each peer benchmark's group of
    the same presentation (``cvbench_mv`` for video/agent, ``cvbench_mv_frames`` for frames); a config
    may list several, comma-separated."""
    from .benchmarks import PEERS

    peers = [bm.frames_group if route == "frames" else bm.task_prefix for bm in PEERS]
    return [ROUTE_GROUPS[route], SYNTH_GROUPS[route], *peers]


class ConfigError(ValueError):
    """A harness config that cannot be used; the message names the file and the fix."""


@dataclass
class HarnessConfig:
    """One lmms-eval run of one model on MVX-Bench."""

    name: str
    model: str
    model_args: dict[str, Any]
    route: str
    route_reason: str
    tasks: str
    frames_per_video: int
    generation: dict[str, Any]
    paper_row: str | None = None
    class_path: str | None = None
    seed: int = 42
    batch_size: int = 1
    notes: str = ""
    paper_ablation: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    #: transformers ``model_type`` of the checkpoint: the route check builds a tiny model of it.
    architecture: str | None = None
    #: why the route cannot be checked offline (remote code, vLLM only, an API), when it cannot.
    offline_reason: str | None = None
    path: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def paper_rows(path: str | Path = PAPER_TABLE) -> list[str]:
    """Model names of Table 1's rows (the valid ``paper_row`` values)."""
    with open(path, newline="", encoding="utf-8") as fh:
        return [r["model"] for r in csv.DictReader(fh)]


def load_config(path: str | Path, *, known_rows: Sequence[str] | None = None) -> HarnessConfig:
    """Parse and validate one YAML config."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read YAML ({exc})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping of config fields")
    missing = [k for k in REQUIRED if k not in raw]
    unknown = sorted(set(raw) - set(REQUIRED) - set(OPTIONAL))
    if missing or unknown:
        raise ConfigError(f"{path}: missing fields {missing}, unknown fields {unknown}; "
                          f"fields are {list(REQUIRED) + list(OPTIONAL)}")
    cfg = HarnessConfig(**raw, path=str(path))
    _validate(cfg, known_rows if known_rows is not None else paper_rows())
    return cfg


def _validate(cfg: HarnessConfig, known_rows: Sequence[str]) -> None:
    where = cfg.path or cfg.name
    if cfg.route not in ROUTE_GROUPS:
        raise ConfigError(f"{where}: route {cfg.route!r} must be one of {sorted(ROUTE_GROUPS)}")
    allowed = route_groups(cfg.route)
    bad = [g for g in cfg.tasks.split(",") if g.strip() not in allowed]
    if bad or not cfg.tasks.strip():
        raise ConfigError(f"{where}: route {cfg.route!r} needs task group {ROUTE_GROUPS[cfg.route]!r} "
                          f"(or {SYNTH_GROUPS[cfg.route]!r}, or a peer benchmark's: {', '.join(allowed[2:])}), "
                          f"not {cfg.tasks!r}")
    if not isinstance(cfg.model_args, dict) or not cfg.model_args:
        raise ConfigError(f"{where}: model_args must be a non-empty mapping")
    if not isinstance(cfg.frames_per_video, int) or cfg.frames_per_video < 1:
        raise ConfigError(f"{where}: frames_per_video must be a positive integer")
    gen = cfg.generation
    if not isinstance(gen, dict) or gen.get("temperature") != 0 or not int(gen.get("max_new_tokens", 0)) > 0:
        raise ConfigError(f"{where}: generation needs temperature: 0 (the paper's setting) and max_new_tokens > 0")
    if cfg.seed != 42:
        raise ConfigError(f"{where}: seed must be 42, the paper's seed")
    if cfg.paper_row is not None and cfg.paper_row not in known_rows:
        raise ConfigError(f"{where}: paper_row {cfg.paper_row!r} is not a Table 1 row; rows: {list(known_rows)}")
    budgets = {k: cfg.model_args[k] for k in FRAME_ARGS if k in cfg.model_args}
    if any(int(v) != cfg.frames_per_video for v in budgets.values()):
        raise ConfigError(f"{where}: frame budget {budgets} disagrees with frames_per_video: {cfg.frames_per_video}")
    if len(cfg.route_reason.strip()) < 20:
        raise ConfigError(f"{where}: route_reason must say why this adapter sees every video")


def config_paths(paths: Iterable[str | Path]) -> list[Path]:
    """YAML files named directly or found in named folders (sorted)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(q for q in p.glob("*.yaml")))
        elif p.is_file():
            out.append(p)
        elif (CONFIG_DIR / f"{p}.yaml").is_file():  # a bare config name
            out.append(CONFIG_DIR / f"{p}.yaml")
        else:
            raise ConfigError(f"{p}: no such config file, folder or name in {CONFIG_DIR}")
    return out


def load_configs(paths: Iterable[str | Path] = (CONFIG_DIR,)) -> list[HarnessConfig]:
    rows = paper_rows()
    cfgs = [load_config(p, known_rows=rows) for p in config_paths(paths)]
    names = [c.name for c in cfgs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"config names must be unique; repeated: {dup}")
    return cfgs


# ----------------------------------------------------------------------------- model resolution

@dataclass
class ModelCheck:
    """How a config's ``model`` resolves in the installed lmms-eval."""

    model: str
    class_path: str
    registered: bool  # found in lmms-eval's model registry (else: a named plugin class path)
    args_checked: bool  # the adapter imported and its constructor signature was compared
    note: str = ""


def resolve_model(cfg: HarnessConfig) -> ModelCheck:
    """Resolve ``cfg.model`` to an adapter class and check ``model_args`` against its constructor.

    A plugin model (``sama``) that is not registered yet passes when the config names its
    agreed class path; its arguments are checked once the class is importable.
    """
    from lmms_eval.models import MODEL_REGISTRY_V2

    try:
        manifest = MODEL_REGISTRY_V2.get_manifest(cfg.model)
        class_path = manifest.chat_class_path or manifest.simple_class_path
        registered = True
    except (KeyError, ValueError):
        expected = plugin_models().get(cfg.model, {}).get("class_path")
        if expected is None or cfg.class_path != expected:
            raise ConfigError(f"{cfg.path}: lmms-eval has no model {cfg.model!r} (and it is not a known plugin "
                              f"model naming its class path); see `lmms-eval models`") from None
        class_path, registered = expected, False
    module, _, cls_name = class_path.rpartition(".")
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        spec = None
    if cfg.class_path is not None and cfg.class_path != class_path:
        raise ConfigError(f"{cfg.path}: class_path {cfg.class_path} disagrees with the registered {class_path}")
    if spec is None:
        if cfg.model not in plugin_models():
            raise ConfigError(f"{cfg.path}: adapter module {module} of {cfg.model!r} is not installed")
        return ModelCheck(cfg.model, class_path, registered, False, f"{module} not importable yet")
    validate = model_args_validator(cfg.model)
    if validate is not None:
        return _check_plugin_args(cfg, validate, class_path, registered)
    try:
        cls = getattr(importlib.import_module(module), cls_name)
    except ImportError as exc:  # an optional dependency of the adapter (e.g. librosa) is missing
        return ModelCheck(cfg.model, class_path, registered, False, f"import failed: {exc}")
    names, open_chain = accepted_args(cls)
    if open_chain:
        return ModelCheck(cfg.model, class_path, registered, False, "constructor takes any keyword")
    bad = sorted(set(cfg.model_args) - names)
    if bad and cfg.model in ENGINE_KWARGS:
        return ModelCheck(cfg.model, class_path, registered, True, f"{bad} go to {ENGINE_KWARGS[cfg.model]}")
    if bad:
        raise ConfigError(f"{cfg.path}: {class_path} does not accept model_args {bad}; it takes {sorted(names)}")
    return ModelCheck(cfg.model, class_path, registered, True)


def resolve_adapter_class(cfg: HarnessConfig) -> type:
    """The adapter class a config runs (imported)."""
    module, _, name = resolve_model(cfg).class_path.rpartition(".")
    return getattr(importlib.import_module(module), name)


#: Arguments that put a run on a CPU (``--device cpu``), set where the adapter takes them:
#: ``flash_attention_2`` needs a GPU, and several adapters default to CUDA.
CPU_ARGS = {"device": "cpu", "device_map": "cpu", "attn_implementation": "sdpa"}


def local_args(cfg: HarnessConfig, pretrained: str | Path, device: str | None = None) -> dict[str, Any]:
    """The config's ``model_args`` with the checkpoint replaced by a local folder (``pretrained``, or
    ``model`` for vLLM) and, for ``device='cpu'``, the CPU arguments its adapter takes."""
    args = dict(cfg.model_args)
    key = "model" if "model" in args and "pretrained" not in args else "pretrained"
    args[key] = str(pretrained)
    if Path(pretrained).is_dir():
        args.pop("revision", None)  # a hub revision means nothing for a local folder
    if device == "cpu":
        names, open_chain = accepted_args(resolve_adapter_class(cfg))
        for k, v in CPU_ARGS.items():
            if k in args or k in names or open_chain:
                args[k] = v
    elif device:
        raise ConfigError(f"--device {device!r}: only 'cpu' has an override (GPU runs use the configs as written)")
    return args


def _check_plugin_args(cfg: HarnessConfig, validate: Any, class_path: str, registered: bool) -> ModelCheck:
    """Validate a plugin model's arguments as the harness passes them (strings) with the validator its
    plugin declares (entry-point group ``mvx_bench.model_args``: free-form ``**model_args``)."""
    try:
        validate(**{k: _arg_value(v) for k, v in cfg.model_args.items()})
    except ValueError as exc:
        raise ConfigError(f"{cfg.path}: {cfg.model} model_args rejected: {exc}") from None
    return ModelCheck(cfg.model, class_path, registered, True)


def accepted_args(cls: type) -> tuple[set[str], bool]:
    """Keyword names an adapter's constructor chain accepts, and whether the chain is open.

    A constructor with ``**kwargs`` forwards to its parent, so names are collected down the MRO
    until a constructor without ``**kwargs``; if none closes the chain, any name may be accepted.
    """
    names: set[str] = set()
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None or klass is object:
            continue
        params = inspect.signature(init).parameters.values()
        names |= {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            names.discard("self")
            return names, False
    names.discard("self")
    return names, True


# ----------------------------------------------------------------------------- commands

def _arg_value(v: Any) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    return str(v)


def model_args_string(args: dict[str, Any]) -> str:
    """lmms-eval's ``--model_args`` form: ``k=v,k=v`` (values must not contain commas)."""
    for k, v in args.items():
        if "," in _arg_value(v) or "=" in _arg_value(v):
            raise ConfigError(f"model_args {k}={v!r}: lmms-eval cannot parse ',' or '=' inside a value")
    return ",".join(f"{k}={_arg_value(v)}" for k, v in args.items())


def gen_kwargs_string(gen: dict[str, Any]) -> str:
    return ",".join(f"{k}={_arg_value(v)}" for k, v in gen.items())


def run_dir(cfg: HarnessConfig, output: str | Path) -> Path:
    """Where one config's lmms-eval output goes: ``<output>/<config name>``."""
    return Path(output) / cfg.name


def build_command(cfg: HarnessConfig, *, limit: int | None = None, output: str | Path = "outputs/runs",
                  extra_args: Sequence[str] = (), python: str = sys.executable,
                  tasks: str | None = None) -> list[str]:
    """The exact lmms-eval command line for one config (samples are always logged)."""
    cmd = [python, "-m", "lmms_eval",
           "--model", cfg.model,
           "--model_args", model_args_string(cfg.model_args),
           "--tasks", tasks or cfg.tasks,
           "--include_path", str(TASKS_DIR),
           "--batch_size", str(cfg.batch_size),
           "--seed", str(cfg.seed),
           "--gen_kwargs", gen_kwargs_string(cfg.generation),
           "--output_path", str(run_dir(cfg, output)),
           "--log_samples", "--log_samples_suffix", cfg.name]
    if limit is not None:
        cmd += ["--limit", str(int(limit))]
    return cmd + list(extra_args)


def run_env(cfg: HarnessConfig) -> dict[str, str]:
    """Environment for a run: the config's ``env`` plus the frame budget for the frames group."""
    return {"MVX_FRAMES_PER_VIDEO": str(cfg.frames_per_video), **{k: str(v) for k, v in cfg.env.items()}}


def _env_prefix(env: dict[str, str]) -> str:
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())


def write_sidecar(cfg: HarnessConfig, cmd: Sequence[str], output: str | Path) -> Path:
    """Record which config produced a run folder, so the leaderboard can match it to its paper row."""
    out = run_dir(cfg, output)
    out.mkdir(parents=True, exist_ok=True)
    side = out / RUN_SIDECAR
    side.write_text(json.dumps({"config": cfg.name, "paper_row": cfg.paper_row, "model": cfg.model,
                                "route": cfg.route, "tasks": cfg.tasks, "frames_per_video": cfg.frames_per_video,
                                "command": list(cmd)}, indent=2), encoding="utf-8")
    return side


def results_files(folder: str | Path) -> list[Path]:
    return sorted(Path(folder).rglob("*_results.json"))


def with_local_model(cfg: HarnessConfig, local_models: str | Path, device: str | None) -> HarnessConfig | None:
    """``cfg`` pointed at ``<local_models>/<config name>`` (e.g. the tiny clones that ``mvx-bench routes
    --save-local-models`` writes), or None when that folder does not exist."""
    folder = Path(local_models) / cfg.name
    if not folder.is_dir():
        return None
    return replace_args(cfg, local_args(cfg, folder, device))


def run_configs(paths: Sequence[str | Path], dry_run: bool = False, limit: int | None = None,
                output: str | Path = "outputs/runs", extra_args: Sequence[str] = (),
                local_models: str | Path | None = None, device: str | None = None) -> int:
    """Print, and unless ``dry_run`` run, lmms-eval for each config. 0 when every run wrote results.

    lmms-eval exits 0 even when a task is missing or the model raises, so success is judged by a
    new results file in the run folder, not by the exit code. With ``local_models``, each config's
    checkpoint becomes ``<local_models>/<config name>`` and configs without that folder are skipped
    (listed, not failed); ``device='cpu'`` sets the CPU arguments each adapter takes.
    """
    try:
        cfgs = load_configs(paths)
        if device and not local_models:
            cfgs = [replace_args(c, local_args(c, c.model_args.get("pretrained", c.model_args.get("model", "")), device))
                    for c in cfgs]
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    failures = 0
    for cfg in cfgs:
        if local_models:
            local = with_local_model(cfg, local_models, device)
            if local is None:
                why = cfg.offline_reason or ("the agent, not a checkpoint" if cfg.route == "agent" else "")
                print(f"# {cfg.name}: skipped, no local model {Path(local_models) / cfg.name}"
                      + (f" (not testable offline: {why})" if why else ""))
                continue
            cfg = local
        cmd = build_command(cfg, limit=limit, output=output, extra_args=extra_args)
        env = run_env(cfg)
        print(f"# {cfg.name} (paper row: {cfg.paper_row or '-'}; route: {cfg.route})")
        print(f"{_env_prefix(env)} {shlex.join(cmd)}", flush=True)
        if dry_run:
            continue
        watch = RunWatch.start(run_dir(cfg, output))
        write_sidecar(cfg, cmd, output)
        proc = subprocess.run(cmd, env={**os.environ, **env})
        found, why = watch.results(cfg.tasks.split(","))
        if proc.returncode != 0 or found is None:
            failures += 1
            print(f"error: {cfg.name}: lmms-eval exited {proc.returncode}; {why or 'see its log above'}",
                  file=sys.stderr)
        else:
            print(f"# {cfg.name}: results in {found}")
    if failures:
        print(f"error: {failures} of {len(cfgs)} config(s) failed", file=sys.stderr)
    return 1 if failures else 0


def replace_args(cfg: HarnessConfig, model_args: dict[str, Any]) -> HarnessConfig:
    from dataclasses import replace

    return replace(cfg, model_args=model_args)


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``mvx-bench run``."""
    parser.add_argument("configs", nargs="+", help="config YAML files, folders of them, or config names")
    parser.add_argument("--dry-run", action="store_true", help="print the commands without running them")
    parser.add_argument("--limit", type=int, default=None, help="questions per task (quick look)")
    parser.add_argument("--output", default="outputs/runs", help="output root; each config writes <output>/<name>")
    parser.add_argument("--local-models", default=None, metavar="DIR",
                        help="use DIR/<config name> as each config's checkpoint (pretrained=); configs without one "
                             "are skipped (e.g. the tiny clones of `mvx-bench routes --save-local-models DIR`)")
    parser.add_argument("--device", choices=("cpu",), default=None,
                        help="cpu: set device/device_map=cpu and attn_implementation=sdpa where the adapter takes them")
    parser.epilog = "Arguments after -- are passed to lmms-eval unchanged."


def cmd_run(args: argparse.Namespace) -> int:
    extra = list(getattr(args, "extra", None) or [])
    return run_configs(args.configs, dry_run=args.dry_run, limit=args.limit, output=args.output, extra_args=extra,
                       local_models=getattr(args, "local_models", None), device=getattr(args, "device", None))
