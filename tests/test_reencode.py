"""`mvx-bench reencode`: a dataset folder copied with every video re-encoded at another CRF, the
frames and their times kept; resumable, refusing mixed settings, a broken video recorded not fatal."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from mvx_tasks.cli import main
from mvx_tasks.clipgen import make_clip, truncate_file
from mvx_tasks.reencode import RECORD, ReencodeError, reencode_folder, reencode_video
from mvx_tasks.video_decoder import clear_cache, load_video
from mvx_tasks.video_index import VideoDecodeError, video_info


def _frame_times(path: Path) -> np.ndarray:
    """Every decoded frame's presentation time (s), read straight from the file."""
    import av

    with av.open(str(path)) as c:
        return np.array([float(f.time) for f in c.decode(video=0)])


def _dataset(root: Path, broken: bool = False) -> Path:
    """Two questions over three clips (one shared), a subtitle and a notes file."""
    make_clip(root / "videos" / "a.mp4", 160, 120, seconds=1.0, fps=12, crf=18, seed=1)
    make_clip(root / "videos" / "b.mp4", 160, 120, seconds=1.5, fps=8, crf=18, seed=2, vfr=True)
    make_clip(root / "videos" / "c.mp4", 160, 120, seconds=1.0, fps=10, crf=18, seed=3)
    if broken:
        truncate_file(root / "videos" / "c.mp4", 0.3)
    (root / "videos" / "a.srt").write_text("1\n00:00:00,000 --> 00:00:01,000\nhello\n", encoding="utf-8")
    (root / "notes.txt").write_text("made by the test\n", encoding="utf-8")
    rows = [
        {"id": "q1", "task": "CNT", "question": "Which?", "answer": "A",
         "options": {"A": "Video A", "B": "Video B", "C": "Video A and B", "D": "Neither"},
         "videos": [{"label": "Reference", "path": "videos/a.mp4", "subtitle": "videos/a.srt"},
                    {"label": "Video A", "path": "videos/b.mp4"}, {"label": "Video B", "path": "videos/c.mp4"}]},
        {"id": "q2", "task": "RID", "question": "Same?", "options": {"A": "Yes", "B": "No"}, "answer": "B",
         "videos": [{"label": "Video 1", "path": "videos/a.mp4"}, {"label": "Video 2", "path": "videos/c.mp4"}]},
    ]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root


def test_reencode_keeps_frames_times_and_files(tmp_path):
    src = _dataset(tmp_path / "src")
    (tmp_path / "private.txt").write_text("not part of the dataset\n", encoding="utf-8")
    (src / "link.txt").symlink_to(tmp_path / "private.txt")
    out = reencode_folder(src, tmp_path / "dst", crf=35, preset="ultrafast")
    dst = tmp_path / "dst"
    assert not (dst / "link.txt").exists()  # a link out of the folder is not followed
    assert sorted(out["done"]) == ["videos/a.mp4", "videos/b.mp4", "videos/c.mp4"]
    assert out["skipped"] == [] and out["failed"] == {}
    # every other file copied byte for byte
    for rel in ("data.jsonl", "videos/a.srt", "notes.txt"):
        assert (dst / rel).read_bytes() == (src / rel).read_bytes()
    for rel in ("videos/a.mp4", "videos/b.mp4", "videos/c.mp4"):
        a, b = video_info(src / rel), video_info(dst / rel)
        assert (b.n_frames, b.width, b.height) == (a.n_frames, a.width, a.height)
        ta, tb = _frame_times(src / rel), _frame_times(dst / rel)
        assert len(ta) == len(tb) and np.abs(ta - tb).max() < 1e-3  # each frame at its own time, VFR included
        assert (dst / rel).read_bytes() != (src / rel).read_bytes()
        clear_cache()
        fa, fb = load_video(src / rel).frames.astype(int), load_video(dst / rel).frames.astype(int)
        assert fa.shape == fb.shape
        diff = float(np.abs(fa - fb).mean())
        assert 0.0 < diff < 12.0  # the same pictures under other codec noise
    assert list(np.round(np.diff(_frame_times(dst / "videos/b.mp4"))[:4], 3)) == [0.125, 0.25, 0.125, 0.25]
    rec = json.loads((dst / RECORD).read_text())
    assert (rec["crf"], rec["preset"], rec["codec"]) == (35, "ultrafast", "libx264")
    assert rec["videos"]["videos/a.mp4"]["frames"] == 12 and rec["videos"]["videos/a.mp4"]["status"] == "done"
    assert not list(dst.rglob("*.part"))


def test_rerun_skips_done_and_redoes_a_replaced_source(tmp_path):
    src = _dataset(tmp_path / "src")
    dst = tmp_path / "dst"
    reencode_folder(src, dst, crf=35, preset="ultrafast")
    stamp = (dst / "videos/a.mp4").stat().st_mtime_ns
    again = reencode_folder(src, dst, crf=35, preset="ultrafast")
    assert again["done"] == [] and sorted(again["skipped"]) == ["videos/a.mp4", "videos/b.mp4", "videos/c.mp4"]
    assert (dst / "videos/a.mp4").stat().st_mtime_ns == stamp
    # a run killed mid-way: the record lost one video; only that one is done again
    rec = json.loads((dst / RECORD).read_text())
    del rec["videos"]["videos/b.mp4"]
    (dst / RECORD).write_text(json.dumps(rec))
    third = reencode_folder(src, dst, crf=35, preset="ultrafast")
    assert third["done"] == ["videos/b.mp4"] and len(third["skipped"]) == 2
    # a source replaced since is re-encoded
    make_clip(src / "videos" / "c.mp4", 160, 120, seconds=2.0, fps=10, crf=18, seed=9)
    fourth = reencode_folder(src, dst, crf=35, preset="ultrafast")
    assert fourth["done"] == ["videos/c.mp4"]
    assert video_info(dst / "videos/c.mp4").n_frames == 20


def test_other_settings_into_the_same_folder_are_refused(tmp_path):
    src = _dataset(tmp_path / "src")
    reencode_folder(src, tmp_path / "dst", crf=35, preset="ultrafast")
    with pytest.raises(ReencodeError, match=r"crf 35, preset ultrafast; this run asks for crf 30, preset ultrafast.*"
                                            r"another folder"):
        reencode_folder(src, tmp_path / "dst", crf=30, preset="ultrafast")
    with pytest.raises(ReencodeError, match="preset 'fastest'"):
        reencode_folder(src, tmp_path / "other", crf=30, preset="fastest")
    with pytest.raises(ReencodeError, match="CRF from 0 to 51.*crf 60"):
        reencode_folder(src, tmp_path / "other", crf=60)
    assert not (tmp_path / "other").exists()  # refused before anything is written
    with pytest.raises(ReencodeError, match="inside it"):
        reencode_folder(src, src / "copy", crf=30)
    with pytest.raises(ReencodeError, match="holds no data.jsonl"):
        reencode_folder(tmp_path / "dst" / "videos", tmp_path / "elsewhere", crf=30)


def test_a_broken_video_is_recorded_and_copied_and_the_rest_go_on(tmp_path, capsys):
    src = _dataset(tmp_path / "src", broken=True)
    dst = tmp_path / "dst"
    rc = main(["reencode", str(src), "--out", str(dst), "--crf", "35", "--preset", "ultrafast"])
    assert rc == 1
    err = capsys.readouterr().err
    assert "failed (copied unchanged): videos/c.mp4:" in err and "c.mp4" in err
    rec = json.loads((dst / RECORD).read_text())
    assert rec["videos"]["videos/c.mp4"]["status"] == "failed"
    assert "truncated" in rec["videos"]["videos/c.mp4"]["reason"] or "cannot be decoded" in rec["videos"]["videos/c.mp4"]["reason"]
    assert (dst / "videos/c.mp4").read_bytes() == (src / "videos/c.mp4").read_bytes()
    assert {rec["videos"][r]["status"] for r in ("videos/a.mp4", "videos/b.mp4")} == {"done"}
    # a video the questions name but the folder lacks: listed, the rest still done
    (src / "videos/b.mp4").unlink()
    out = reencode_folder(src, tmp_path / "dst2", crf=35, preset="ultrafast")
    assert "does not exist" in out["failed"]["videos/b.mp4"] and not (tmp_path / "dst2/videos/b.mp4").exists()
    assert out["done"] == ["videos/a.mp4"] and "videos/c.mp4" in out["failed"]


def test_rotation_is_applied_and_odd_sizes_padded(tmp_path):
    rot = make_clip(tmp_path / "rot.mp4", 160, 96, seconds=0.5, fps=8, crf=18, rotate=90)
    got = reencode_video(rot, tmp_path / "rot_out.mp4", crf=30, preset="ultrafast")
    info = video_info(tmp_path / "rot_out.mp4")
    assert got["rotated"] == 90 and info.rotation == 0 and (info.width, info.height) == (96, 160)
    clear_cache()
    a, b = load_video(rot).frames.astype(int), load_video(tmp_path / "rot_out.mp4").frames.astype(int)
    assert a.shape == b.shape and float(np.abs(a - b).mean()) < 12.0  # upright, as the decoder shows the source
    odd = make_clip(tmp_path / "odd.mp4", 161, 121, seconds=0.5, fps=8, pix_fmt="yuv444p", crf=18)
    got = reencode_video(odd, tmp_path / "odd_out.mp4", crf=30, preset="ultrafast")
    assert got["padded"] and (got["width"], got["height"]) == (162, 122)
    with pytest.raises(VideoDecodeError, match="does not open|cannot be decoded"):
        (tmp_path / "junk.mp4").write_bytes(os.urandom(2000))
        reencode_video(tmp_path / "junk.mp4", tmp_path / "junk_out.mp4", crf=30)
    assert not (tmp_path / "junk_out.mp4").exists() and not (tmp_path / "junk_out.mp4.part").exists()
