"""``mvx-bench view``: a static HTML site to look at an evaluation instead of reading JSON.

:mod:`.build` collects a run (lmms-eval results, samples files, SAMA traces) into plain data,
:mod:`.render` writes the pages (run page, question list, one page per question, compare page)
and the filmstrip thumbnails, :mod:`.cli` holds the command's arguments.
"""
from __future__ import annotations

__all__ = ["load_run", "build_site"]


def __getattr__(name: str):  # light package import: the CLI parser must not pull numpy/PIL
    if name == "load_run":
        from .build import load_run

        return load_run
    if name == "build_site":
        from .render import build_site

        return build_site
    raise AttributeError(name)
