"""Write the static site: plain HTML + one CSS + one small script, thumbnails as files beside them.

Every text that comes from a run (questions, model outputs, tool results, planner messages) is
escaped with :func:`html.escape`; the question list's rows travel as JSON in ``data/index.js``
and are put into the page with ``textContent``, never as markup. No external resource is
referenced, so the folder opens from the file system offline.

The pages come from :mod:`.run_pages` (run, question list, compare) and :mod:`.question_page`,
built from :mod:`.markup`; thumbnails from :mod:`.thumbnails`. This module lays the site out.
"""
from __future__ import annotations

import json
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .build import Question, flips, load_run, safe_name, _task_order
from .question_page import question_page
from .run_pages import _sources_order, compare_page, index_rows, list_page, run_page
from .thumbnails import Thumbnailer

STATIC = Path(__file__).with_name("static")
PAGE_SIZE = 100  # question-list rows per page
# ----------------------------------------------------------------------------- the site


def build_site(output_path: str | Path, out: str | Path, *, compare: str | Path | None = None,
               data: str | Path | None = None, thumbnails: bool = True, workers: int = 2,
               progress: bool = False) -> dict[str, Any]:
    """Build the site for one run (and a comparison with a second); returns counts and timings."""
    t0 = time.perf_counter()
    run = load_run(output_path, data=data)
    other = load_run(compare, data=data) if compare else None
    t_load = time.perf_counter() - t0
    site = Path(out)
    (site / "q").mkdir(parents=True, exist_ok=True)
    (site / "data").mkdir(exist_ok=True)
    (site / "assets").mkdir(exist_ok=True)
    for f in STATIC.iterdir():
        if f.suffix in (".css", ".js"):
            shutil.copyfile(f, site / "assets" / f.name)
    has_compare = other is not None
    (site / "index.html").write_text(run_page(run, site, has_compare), encoding="utf-8")
    index = {"run": run.name, "page_size": PAGE_SIZE, "tasks": _task_order({q.task for q in run.questions.values()}),
             "sources": _sources_order(run), "rows": index_rows(run)}
    (site / "data" / "index.js").write_text(
        "window.MVX_INDEX = " + json.dumps(index, ensure_ascii=True).replace("</", "<\\/") + ";\n", encoding="utf-8")
    (site / "questions.html").write_text(list_page(run, has_compare), encoding="utf-8")
    if other is not None:
        (site / "compare.html").write_text(compare_page(run, other, str(compare)), encoding="utf-8")
    t_pages = time.perf_counter() - t0
    thumbs = Thumbnailer(site) if thumbnails and run.is_agent else None

    def one(q: Question) -> None:
        (site / "q" / f"{safe_name(q.id)}.html").write_text(question_page(q, run, thumbs, has_compare), encoding="utf-8")

    qs = list(run.questions.values())
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(qs), desc="question pages", dynamic_ncols=True)
    with ThreadPoolExecutor(max_workers=max(1, int(workers))) as pool:
        for _ in pool.map(one, qs):
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return {"site": str(site), "questions": len(qs), "agent": run.is_agent, "thumbnails": thumbs.written if thumbs else 0,
            "flips": len(flips(run, other)) if other else None, "seconds": round(time.perf_counter() - t0, 3),
            "seconds_load": round(t_load, 3), "seconds_pages": round(t_pages, 3)}
