"""benchmarks/pixel_noise.py: deterministic ±N grey-level noise on decoded frames, and the benchmarks
that use it (offline_profile.py --pixel-noise, actor_stability.py --pixel-noise)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mvx_tasks.video_decoder as vd
from mvx_tasks.synth.encode import encode_mp4

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
import pixel_noise


def test_noise_is_bounded_clipped_and_deterministic() -> None:
    frames = np.array([[[0, 128, 255]] * 64] * 4, np.uint8).reshape(4, 8, 8, 3)
    a = pixel_noise.noisy(frames, 1, "videos/x.mp4", range(4))
    d = a.astype(int) - frames.astype(int)
    assert d.min() == -1 and d.max() == 1  # every value of [-1, 1] drawn, nothing beyond
    assert a[..., 0].min() == 0 and a[..., 2].max() == 255  # clipped, not wrapped
    assert np.array_equal(a, pixel_noise.noisy(frames, 1, "videos/x.mp4", range(4)))  # same key, same noise
    assert not np.array_equal(a, pixel_noise.noisy(frames, 1, "videos/y.mp4", range(4)))
    assert not np.array_equal(a, pixel_noise.noisy(frames, 1, "videos/x.mp4", range(1, 5)))
    assert pixel_noise.noisy(frames, 0, "videos/x.mp4") is frames
    big = pixel_noise.noisy(np.full((2, 50, 50, 3), 100, np.uint8), 3, "k")
    assert set(np.unique(big.astype(int) - 100)) == {-3, -2, -1, 0, 1, 2, 3}


@pytest.fixture
def clip_path(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    frames = np.repeat(rng.integers(40, 200, (1, 48, 64, 3), dtype=np.uint8), 6, axis=0)
    return encode_mp4(frames, tmp_path / "c.mp4", fps=10, crf=18)


def test_install_makes_every_decode_noisy(clip_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vd, "_decode", vd._decode)  # restored after the test
    vd.clear_cache()
    clean = vd.load_video(clip_path)
    pixel_noise.install(1)
    pixel_noise.install(1)  # a second install does not stack the noise
    try:
        got = vd.load_video(clip_path)
        assert got is not clean  # the cache was cleared: decoded again
        diff = got.frames.astype(int) - clean.frames.astype(int)
        assert diff.min() == -1 and diff.max() == 1
        assert np.array_equal(got.frames, pixel_noise.noisy(clean.frames, 1, str(clip_path), clean.indices))
    finally:
        vd.clear_cache()


def test_offline_profile_answers_on_noisy_frames(tmp_path: Path) -> None:
    """The same one-question set answered clean and with ±2 noise: both runs finish, the table says
    which is which, and the noisy run's motion evidence differs from the clean run's."""
    from test_lite_actor import actor_clip

    root = tmp_path / "set"
    (root / "videos").mkdir(parents=True)
    for name, motion in (("ref", "slide"), ("a", "orbit"), ("b", "slide")):
        encode_mp4(actor_clip(motion).frames, root / "videos" / f"{name}.mp4", fps=10, crf=20)
    q = {"id": "am-0", "task": "AM", "question": "In the Reference video a shape performs an action. Which candidate "
         "shows that action, even if performed by something that looks different?",
         "options": {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}, "answer": "B",
         "videos": [{"label": "Reference", "path": "videos/ref.mp4"}, {"label": "Video A", "path": "videos/a.mp4"},
                    {"label": "Video B", "path": "videos/b.mp4"}, {"label": "Video C", "path": "videos/a.mp4"},
                    {"label": "Video D", "path": "videos/a.mp4"}]}
    (root / "data.jsonl").write_text(json.dumps(q) + "\n")
    def run(extra: list[str], name: str) -> tuple[str, dict]:
        out = subprocess.run([sys.executable, str(BENCH / "offline_profile.py"), "--data", str(root), "--configs", "full",
                              "--workers", "1", "--trace-dir", str(tmp_path / name), *extra],
                             check=False, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout, json.loads((tmp_path / name / "full" / "am-0.json").read_text())

    table, clean = run(["--json", str(tmp_path / "clean.json")], "clean")
    noisy_table, noisy = run(["--pixel-noise", "2"], "noisy")
    # the profile's record says whether the trace's final reason marks the answer fragile
    record = json.loads((tmp_path / "clean.json").read_text())["runs"][0]["records"][0]
    final = [s for s in clean["steps"] if s["kind"] == "final"][-1]
    assert record["fragile"] is ("fragile:" in final["reason"])
    assert "grey-level noise" not in table and "decoded frames with +-2 grey-level noise" in noisy_table

    def motion(trace: dict) -> list:
        return [s["data"] for s in trace["steps"] if s.get("tool") == "motion_analyzer" and not s.get("error")]
    assert len(motion(clean)) == len(motion(noisy)) == 5
    assert motion(clean) != motion(noisy)
