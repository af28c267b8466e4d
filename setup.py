"""Packages and their data (the rest of the metadata is in setup.cfg).

The baseline and SAMA run configs stay at the repository root (``harness_configs/``) and ship inside
the benchmark package as ``mvx_tasks.configs``: ``package_dir`` maps the folder into the package, in
the wheel and in an editable install alike, so every command finds them through
``importlib.resources`` (``mvx_tasks/package_data.py``), never through the source tree.
"""
from setuptools import find_namespace_packages, setup

CONFIGS = "mvx_tasks.configs"

setup(
    # data folders without __init__.py (mvx_tasks/tasks/..., viewer/static) are packages too: their files ship
    packages=find_namespace_packages(include=["mvx_tasks", "mvx_tasks.*", "sama_model", "sama_model.*"],
                                     exclude=["*.__pycache__"]) + [CONFIGS, f"{CONFIGS}.peers"],
    package_dir={CONFIGS: "harness_configs"},
    package_data={
        # Every non-Python file either package opens at run time (tests/test_install.py builds the wheel
        # and checks that each tracked data file is in it).
        "mvx_tasks": ["**/*.yaml", "**/*.jsonl", "**/*.md", "**/*.html", "**/*.css", "**/*.js", "**/*.csv"],
        "sama_model": ["*.yaml", "**/*.md", "**/*.yaml", "**/*.json"],
        CONFIGS: ["*.yaml"],
        f"{CONFIGS}.peers": ["*.yaml"],
    },
)
