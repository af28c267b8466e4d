"""The docs a newcomer reads first stay true to the tree: every product module has its line in
docs/architecture.md, every linked page exists, and the README stays a README (no dated timing diary)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _product_modules() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for pkg in ("mvx_tasks", "sama_model") for p in (ROOT / pkg).rglob("*.py")}


def test_architecture_lists_every_module_once_and_nothing_else():
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## Every module, one line each", 1)[1]
    listed = re.findall(r"^- `([^`]+\.py)`: \S", section, flags=re.M)
    assert len(listed) == len(set(listed))
    assert set(listed) == _product_modules(), (sorted(_product_modules() - set(listed)), sorted(set(listed) - _product_modules()))


def test_every_relative_link_in_readme_and_docs_resolves():
    broken = []
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_readme_is_short_and_carries_no_dated_timing_lines():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 300
    assert not re.search(r"fresh clone of [0-9a-f]{7}", text)
    assert not re.search(r"20\d\d-\d\d-\d\d \d\d:\d\d", text)
    for command in ("make demo", "make test"):
        assert command in text
