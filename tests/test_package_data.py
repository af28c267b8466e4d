"""Package data found through the package (importlib.resources), the user overrides, the LICENSE and
the declared dependency ranges."""
from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mvx_tasks import package_data

REPO = Path(__file__).resolve().parent.parent


def _cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mvx_tasks.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}, cwd=cwd, timeout=300)


def test_shipped_configs_are_the_repository_folder_through_the_package(monkeypatch):
    monkeypatch.delenv(package_data.CONFIG_ENV, raising=False)
    shipped = package_data.config_dir()
    import mvx_tasks.configs

    assert Path(mvx_tasks.configs.__file__).parent == shipped
    names = sorted(p.relative_to(shipped).as_posix() for p in shipped.rglob("*.yaml"))
    assert names == sorted(p.relative_to(REPO / "harness_configs").as_posix()
                           for p in (REPO / "harness_configs").rglob("*.yaml"))
    assert "qwen2_5_vl_7b.yaml" in names and "peers/sama_offline_peers.yaml" in names


def test_shipped_paper_table_is_the_results_copy(monkeypatch):
    monkeypatch.delenv(package_data.PAPER_TABLE_ENV, raising=False)
    assert package_data.paper_table().read_bytes() == (REPO / "results" / "paper_table1.csv").read_bytes()


def test_overrides_replace_the_shipped_copies(tmp_path, monkeypatch):
    (tmp_path / "configs").mkdir()
    table = tmp_path / "table.csv"
    table.write_text("model,Avg\n")
    monkeypatch.setenv(package_data.CONFIG_ENV, str(tmp_path / "configs"))
    monkeypatch.setenv(package_data.PAPER_TABLE_ENV, str(table))
    assert package_data.config_dir() == tmp_path / "configs"
    assert package_data.paper_table() == table
    assert package_data.shipped_config_dir() != tmp_path / "configs"


def test_a_user_config_folder_is_what_the_commands_use(tmp_path):
    own = tmp_path / "my_configs"
    own.mkdir()
    text = (REPO / "harness_configs" / "qwen2_5_vl_7b.yaml").read_text().replace("name: qwen2_5_vl_7b", "name: mine")
    (own / "mine.yaml").write_text(text)
    proc = _cli("configs-path", env={package_data.CONFIG_ENV: str(own)}, cwd=tmp_path)
    assert proc.stdout.strip() == str(own)
    proc = _cli("run", "mine", "--dry-run", env={package_data.CONFIG_ENV: str(own)}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# mine (paper row: Qwen2.5-VL-7B") and "--output_path outputs/runs/mine" in proc.stdout


def test_a_missing_override_is_a_clear_error(tmp_path):
    proc = _cli("configs-path", env={package_data.CONFIG_ENV: str(tmp_path / "nope")})
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"error: {package_data.CONFIG_ENV}={tmp_path / 'nope'}: no such folder; point it at "
                                   "a folder of run configs or unset it to use the shipped copy")


def test_license_is_the_apache_2_text():
    text = (REPO / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License\n                           Version 2.0, January 2004")
    assert "END OF TERMS AND CONDITIONS" in text and len(text.splitlines()) == 202
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    assert cfg["metadata"]["license"] == "Apache-2.0" and cfg["metadata"]["license_files"] == "LICENSE"


def test_install_requires_has_ranges_not_pins():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    reqs = [r.strip() for r in cfg["options"]["install_requires"].splitlines() if r.strip() and not r.strip().startswith("#")]
    assert [r for r in reqs if "==" in r] == []
    assert "lmms-eval>=0.6.1,<0.8" in reqs


@pytest.mark.parametrize("extra,wanted", [("models", {"open-clip-torch"}), ("vlmeval", {"openpyxl"})])
def test_extras_declare_their_packages(extra, wanted):
    from mvx_tasks.install_extras import NO_DEPS, extra_requirements

    names = {r.split(">")[0].split("<")[0].split("=")[0].strip().lower() for r in extra_requirements(extra)}
    assert wanted <= names
    assert "opencv-python" not in names  # the conflicting one comes only through `install-extras`
    assert NO_DEPS[extra][0]
