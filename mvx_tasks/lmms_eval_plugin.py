"""The benchmark's entry into lmms-eval: the baselines' ``mvx_hf_chat`` manifest and task discovery.

lmms-eval finds plugin models through the ``lmms_eval.models`` entry-point group, but task folders
only through ``--include_path`` (``--include_path "$(mvx-bench tasks-path)"`` is the documented,
always-working way). For ``lmms-eval eval`` with no flag, the entry-point callables (this module's
:func:`models` and the agent's, ``sama_model.lmms_eval_plugin``) wrap ``TaskManager.initialize_tasks``
so that every task index also holds this package's folder: lmms-eval imports its model registry, and
so calls the entry points, before it builds its ``TaskManager``. The wrapper copies no signature: it
binds whatever arguments the installed method takes through :func:`inspect.signature` and only
appends to its ``include_path``; when a lmms-eval release renames or drops that parameter, it leaves
the method alone (``--include_path`` still works) and tests/test_discovery.py fails.

``lmms-eval tasks list`` builds a TaskManager without loading the model entry points and
``lmms-eval models`` prints only lmms-eval's built-in tables, so neither sees a plugin;
``mvx-bench tasks --lmms`` and ``mvx-bench models`` say what lmms-eval itself resolves
(docs/discovery.md).
"""
from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from .package_data import tasks_dir

TASKS_DIR = str(tasks_dir())
ENTRY_GROUP = "lmms_eval.models"
#: plugins' validators of their free-form ``--model_args`` (``model id = module:function``)
MODEL_ARGS_GROUP = "mvx_bench.model_args"
PATH_PARAMETER = "include_path"


class UnsupportedUpstream(RuntimeError):
    """The installed lmms-eval's ``initialize_tasks`` no longer takes ``include_path``."""


def _as_paths(value: Any) -> list:
    if value is None:
        return []
    return [value] if isinstance(value, (str, Path)) else list(value)


def with_task_folder(original: Callable, folder: str = TASKS_DIR) -> Callable:
    """``original`` (a ``TaskManager.initialize_tasks``) with ``folder`` added to its ``include_path``,
    whatever else its signature holds; :class:`UnsupportedUpstream` when it has no such parameter."""
    sig = inspect.signature(original)
    param = sig.parameters.get(PATH_PARAMETER)
    if param is None or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
        raise UnsupportedUpstream(f"{getattr(original, '__qualname__', original)}{sig} takes no keyword "
                                  f"{PATH_PARAMETER!r}; pass --include_path \"$(mvx-bench tasks-path)\"")

    @functools.wraps(original)
    def initialize_tasks(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        paths = _as_paths(bound.arguments.get(PATH_PARAMETER))
        if not any(Path(p).resolve() == Path(folder).resolve() for p in paths):
            paths.append(folder)
        bound.arguments[PATH_PARAMETER] = paths
        return original(*bound.args, **bound.kwargs)

    initialize_tasks._mvx_patched = True  # type: ignore[attr-defined]
    return initialize_tasks


def extend_task_paths() -> bool:
    """Make every TaskManager index this package's tasks (idempotent). True when it does."""
    try:
        from lmms_eval.tasks import TaskManager
    except Exception:  # lmms-eval absent or mid-import: --include_path still works
        return False
    anchor_data_files()
    if getattr(TaskManager.initialize_tasks, "_mvx_patched", False):
        return True
    try:
        TaskManager.initialize_tasks = with_task_folder(TaskManager.initialize_tasks)
    except UnsupportedUpstream:
        return False
    return True


_LOCAL_BUILDERS = {"csv", "json", "parquet", "text", "pandas", "arrow"}


def anchored_data_files(config: dict, folder: str | Path) -> dict:
    """``config`` with each relative ``dataset_kwargs.data_files`` path that exists in ``folder`` made
    absolute (a local builder's files only): what lmms-eval does itself since 0.7.3."""
    kwargs = config.get("dataset_kwargs")
    if config.get("dataset_path") not in _LOCAL_BUILDERS or not isinstance(kwargs, dict):
        return config

    def anchor(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: anchor(v) for k, v in value.items()}
        if isinstance(value, list):
            return [anchor(v) for v in value]
        if isinstance(value, str) and value and not Path(value).is_absolute() and (Path(folder) / value).is_file():
            return str(Path(folder) / value)
        return value

    return {**config, "dataset_kwargs": {**kwargs, "data_files": anchor(kwargs.get("data_files"))}}


def anchor_data_files() -> bool:
    """Version shim for lmms-eval releases before 0.7.3 (those without their own ``data_files``
    anchoring), which wraps their YAML loader:

    - they resolve a task YAML's relative ``data_files`` (the MVX tasks' placeholder) against the working
      directory, so every MVX task fails to load outside this package's folder: this package's YAMLs (and
      only those) get them anchored at their own folder, as 0.7.3 does itself;
    - 0.7.2's wheel lacks ``tasks/corecognition/_default_template_yaml``, and its task indexer stops at the
      first YAML it cannot read, so no task at all loads: while indexing (``mode="simple"``), another
      package's YAML whose file is missing is skipped with a warning naming it.

    True when the installed release needs no shim or has it."""
    try:
        from lmms_eval import utils
    except Exception:
        return False
    original = utils.load_yaml_config
    if hasattr(utils, "_maybe_resolve_yaml_local_data_files") or getattr(original, "_mvx_patched", False):
        return True
    sig = inspect.signature(original)
    if not {"yaml_path", "yaml_dir", "mode"} <= set(sig.parameters):
        return False
    root = Path(TASKS_DIR).resolve()

    @functools.wraps(original)
    def load_yaml_config(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        path, folder = bound.arguments["yaml_path"], bound.arguments["yaml_dir"]
        folder = folder or (Path(path).parent if path else None)
        ours = bool(folder) and Path(folder).resolve().is_relative_to(root)
        try:
            config = original(*args, **kwargs)
        except FileNotFoundError as exc:
            if ours or bound.arguments["mode"] != "simple":
                raise
            warnings.warn(f"lmms-eval cannot index {path}: {exc} (a file missing from the installed lmms-eval); "
                          "that task is skipped", stacklevel=2)
            return {}
        return anchored_data_files(config, folder) if ours and isinstance(config, dict) else config

    load_yaml_config._mvx_patched = True  # type: ignore[attr-defined]
    utils.load_yaml_config = load_yaml_config
    return True


def models():
    """Entry point (``lmms_eval.models``): the baselines' adapter manifest, plus MVX task discovery."""
    extend_task_paths()
    return [hf_chat_manifest(), replay_manifest()]


def hf_chat_manifest():
    """``--model mvx_hf_chat``: the baselines' transformers chat adapter (every video, labelled, N frames)."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(model_id="mvx_hf_chat", chat_class_path="mvx_tasks.baselines.hf_chat.HFChat")


def _manifests(payload: Any) -> list:
    payload = payload() if callable(payload) else payload
    return list(payload) if isinstance(payload, (list, tuple)) else [payload]


def plugin_models() -> dict[str, dict[str, Any]]:
    """The models installed plugins declare (``lmms_eval.models`` entry points), by model id: the
    manifest's class path and kind, and the plugin (entry point and distribution) that declares it.
    A plugin that fails to load is listed under ``"!<entry point>"`` with the error."""
    out: dict[str, dict[str, Any]] = {}
    for ep in entry_points(group=ENTRY_GROUP):
        dist = getattr(getattr(ep, "dist", None), "name", "?")
        try:
            manifests = _manifests(ep.load())
        except Exception as exc:  # report, do not hide: lmms-eval itself drops later plugins after one fails
            out[f"!{ep.name}"] = {"error": f"{type(exc).__name__}: {exc}", "entry_point": ep.value, "dist": dist}
            continue
        for m in manifests:
            out[m.model_id] = {"class_path": m.chat_class_path or m.simple_class_path,
                               "kind": "chat" if m.chat_class_path else "simple",
                               "entry_point": ep.value, "dist": dist}
    return out


def model_args_validator(model_id: str) -> Callable[..., Any] | None:
    """The validator a plugin declares for its model's free-form ``model_args`` (entry-point group
    ``mvx_bench.model_args``, named by model id), or None."""
    for ep in entry_points(group=MODEL_ARGS_GROUP):
        if ep.name == model_id:
            return ep.load()
    return None


def replay_manifest():
    """``--model mvx_replay``: an earlier run's logged answers, scored again with their figures."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(model_id="mvx_replay", chat_class_path="mvx_tasks.replay.Replay")
