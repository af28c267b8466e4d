"""Where the files that commands read are found: inside the installed package, or in a user's folder.

Every command reads its data through the package (``importlib.resources``), so a wheel installed
anywhere works as a git checkout does: the lmms-eval task folder (``mvx_tasks/tasks``), the baseline
and SAMA run configs (``harness_configs/`` in the repository, shipped as the package
``mvx_tasks.configs``, see setup.py) and the paper's Table 1 (``mvx_tasks/leaderboard/paper_table1.csv``,
the same file as ``results/paper_table1.csv``). Two environment variables replace the shipped copies
with a user's own (docs/install.md, "Overrides"):

- ``MVX_CONFIG_DIR``: a folder of run configs used instead of the shipped ones (start from a copy:
  ``cp -r "$(mvx-bench configs-path)" my_configs``);
- ``MVX_PAPER_TABLE``: a Table 1 CSV used instead of the shipped one (``mvx-bench leaderboard --paper``
  overrides both for one run).
"""
from __future__ import annotations

import atexit
import os
from contextlib import ExitStack
from importlib import resources
from pathlib import Path

CONFIG_ENV = "MVX_CONFIG_DIR"
PAPER_TABLE_ENV = "MVX_PAPER_TABLE"
CONFIG_PACKAGE = "mvx_tasks.configs"

_EXTRACTED = ExitStack()  # package data extracted from a zip import lives until the process ends
atexit.register(_EXTRACTED.close)


class PackageDataError(FileNotFoundError):
    """A data file the command needs is missing; the message names it and the fix."""


def packaged(package: str, *parts: str) -> Path:
    """A file or folder shipped in ``package``, as a real path (extracted once when the package is
    imported from a zip)."""
    try:
        res = resources.files(package).joinpath(*parts)
    except ModuleNotFoundError as exc:
        raise PackageDataError(f"package {package} is not installed ({exc}); reinstall mvx-sama "
                               "(docs/install.md)") from None
    path = res if isinstance(res, Path) else _EXTRACTED.enter_context(resources.as_file(res))
    if not Path(path).exists():
        raise PackageDataError(f"{'/'.join((package.replace('.', '/'), *parts))} is missing from the installed "
                               f"package at {path}; reinstall mvx-sama (docs/install.md)")
    return Path(path)


def _override(env: str, want_dir: bool) -> Path | None:
    value = os.environ.get(env, "").strip()
    if not value:
        return None
    path = Path(value).expanduser()
    if not (path.is_dir() if want_dir else path.is_file()):
        raise PackageDataError(f"{env}={value}: no such {'folder' if want_dir else 'file'}; point it at "
                               f"{'a folder of run configs' if want_dir else 'a Table 1 CSV'} or unset it "
                               "to use the shipped copy")
    return path


def shipped_config_dir() -> Path:
    """The run configs shipped with the package (``harness_configs/`` of the repository)."""
    return packaged(CONFIG_PACKAGE)


def config_dir() -> Path:
    """The run configs commands use: ``$MVX_CONFIG_DIR`` when set, else the shipped ones."""
    return _override(CONFIG_ENV, want_dir=True) or shipped_config_dir()


def shipped_paper_table() -> Path:
    """The paper's Table 1 as shipped (the same file as ``results/paper_table1.csv``)."""
    return packaged("mvx_tasks", "leaderboard", "paper_table1.csv")  # files() of the sub-package would import it


def paper_table() -> Path:
    """The Table 1 CSV commands use: ``$MVX_PAPER_TABLE`` when set, else the shipped one."""
    return _override(PAPER_TABLE_ENV, want_dir=False) or shipped_paper_table()


def tasks_dir() -> Path:
    """The lmms-eval task folder (``--include_path``; ``mvx-bench tasks-path`` prints it)."""
    return packaged("mvx_tasks", "tasks")
