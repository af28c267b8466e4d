"""The one decoder on generated clips: decoder agreement, rotation, VFR, odd sizes, bad files, the
sampling policy, windows on demand, the byte-bounded cache, the frames group's frames, and (in a
subprocess) the memory bound on an HD clip."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mvx_tasks import video_decoder as V
from mvx_tasks.clipgen import make_audio_only, make_clip, truncate_file


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    d = tmp_path_factory.mktemp("clips")
    out = {
        "plain": make_clip(d / "plain.mp4", 320, 240, 3, 24, gop=24),
        "long": make_clip(d / "long.mp4", 320, 240, 12, 24, gop=48),
        "upright": make_clip(d / "upright.mp4", 160, 96, 2, 12),
        "rotated": make_clip(d / "rotated.mp4", 160, 96, 2, 12, rotate=90),
        "vfr": make_clip(d / "vfr.mp4", 160, 96, 3, 12, vfr=True),
        "odd": make_clip(d / "odd.mp4", 161, 97, 2, 12, pix_fmt="yuv444p"),
        "audio": make_audio_only(d / "audio.m4a"),
    }
    full = make_clip(d / "fs.mp4", 320, 240, 4, 24, faststart=True)
    out["truncated"] = truncate_file(full, 0.5, d / "truncated.mp4")
    out["no_index"] = truncate_file(make_clip(d / "nofs.mp4", 320, 240, 2, 24), 0.5, d / "no_index.mp4")
    (d / "empty.mp4").write_bytes(b"")
    out["empty"] = d / "empty.mp4"
    V.clear_cache()
    yield out
    V.clear_cache()


@pytest.mark.parametrize("max_side", [448, 160])  # kept at file size, and scaled inside the decoder
def test_decord_and_pyav_agree_on_indices_timestamps_and_pixels(clips, max_side):
    a = V.load_video(clips["plain"], decoder="decord", max_side=max_side)
    b = V.load_video(clips["plain"], decoder="av", max_side=max_side)
    assert (a.decoder, b.decoder) == ("decord", "av")
    assert np.array_equal(a.indices, b.indices)
    assert np.abs(a.timestamps - b.timestamps).max() <= 1 / 24
    assert a.frames.shape == b.frames.shape
    assert a.frames.shape[1:] == ((240, 320, 3) if max_side == 448 else (120, 160, 3))
    diff = np.abs(a.frames.astype(int) - b.frames.astype(int)).mean()
    assert diff < (1.0 if max_side == 448 else 6.0), diff  # same frames; scaling kernels differ slightly


def test_vfr_timestamps_come_from_the_file_and_decoders_agree(clips):
    a = V.load_video(clips["vfr"], decoder="decord")
    b = V.load_video(clips["vfr"], decoder="av")
    steps = np.round(np.diff(a.timestamps), 3)
    assert set(steps) == {0.083, 0.167}  # 1/12 and 2/12 s alternate
    assert np.allclose(a.timestamps, b.timestamps) and np.array_equal(a.frames, b.frames)
    assert a.duration == pytest.approx(a.timestamps[-1] + np.median(np.diff(a.timestamps)))


def test_rotation_metadata_gives_upright_frames(clips):
    up = V.load_video(clips["upright"])
    rot = V.load_video(clips["rotated"])
    assert rot.native_size == (96, 160) and rot.frames.shape[1:3] == (160, 96)
    assert rot.decoder == "av"  # decord garbles scaled rotated files: never used for them
    assert np.abs(rot.frames.astype(int) - np.rot90(up.frames, -1, axes=(1, 2)).astype(int)).mean() < 1.0
    small = V.load_video(clips["rotated"], max_side=80)
    assert small.frames.shape[1:3] == (80, 48)


def test_odd_sizes_decode_at_their_size_and_scale(clips):
    for dec in ("decord", "av"):
        assert V.load_video(clips["odd"], decoder=dec).frames.shape[1:] == (97, 161, 3)
        assert V.load_video(clips["odd"], decoder=dec, max_side=64).frames.shape[1:] == (39, 64, 3)


@pytest.mark.parametrize("name,words", [
    ("truncated", ["truncated", "stops at 2.0", "of 4.00 s", "re-download"]),
    ("no_index", ["cannot be decoded", "moov", "re-download"]),
    ("empty", ["empty", "replace it"]),
    ("audio", ["no video stream", "audio"]),
])
def test_bad_files_fail_with_the_file_the_cause_and_the_fix(clips, name, words):
    path = clips[name]
    with pytest.raises(V.VideoDecodeError) as err:
        V.load_video(path)
    msg = str(err.value)
    assert str(path) in msg and all(w in msg for w in words), msg
    assert V.probe_video(path) == msg
    assert V.check_video(path) == msg
    V.load_video(clips["plain"])  # nothing else is affected


def test_missing_file_and_a_healthy_file_decode_to_the_end(clips, tmp_path):
    assert "does not exist" in V.probe_video(tmp_path / "nope.mp4")
    assert V.check_video(clips["long"]) is None
    info = V.video_info(clips["truncated"])
    assert info.broken_at == pytest.approx(2.0, abs=1 / 24) and info.declared_frames == 96


def test_sampling_policy_floor_cap_and_fps_target(clips):
    pol = V.SamplingPolicy(fps=2.0, min_frames=4, max_frames=10, max_side=448)
    assert pol.frames_for(1.0, 24) == 4 and pol.frames_for(3.0, 72) == 6 and pol.frames_for(600, 18000) == 10
    assert pol.frames_for(1.0, 3) == 3  # never more than the file has
    clip = V.load_video(clips["long"], policy=pol)
    assert clip.n_frames == 10 and clip.total_frames == 288
    assert clip.policy["kept"] == 10 and clip.policy["fps"] == 2.0
    assert V.sampling_of(clip) == {"frames": 10, "of": 288, "size": [320, 240],
                                   "policy": {"fps": 2.0, "min_frames": 4, "max_frames": 10, "max_side": 448}}
    # the default floor keeps every frame of a short clip, as before the policy existed
    assert V.load_video(clips["plain"]).n_frames == 72


@pytest.mark.parametrize("decoder", ["decord", "av"])
def test_window_rereads_decode_more_frames_than_the_uniform_sampling(clips, decoder):
    pol = V.SamplingPolicy(fps=1.0, min_frames=4, max_frames=12, max_side=448)
    coarse = V.load_video(clips["long"], policy=pol, decoder=decoder)
    assert len(coarse.window(5.0, 7.0)) <= 2
    before = V.decode_stats()["window_decodes"]
    dense = V.load_window(clips["long"], 5.0, 7.0, 24, decoder=decoder)
    assert dense.n_frames == 24 and dense.span == (5.0, 7.0)
    assert dense.timestamps.min() >= 5.0 and dense.timestamps.max() <= 7.0
    # the seek landed right: same pixels as decoding every frame from the start
    every = V.load_video(clips["long"], max_frames=288, decoder=decoder)
    assert np.array_equal(dense.frames, every.frames[dense.indices])
    assert V.load_window(clips["long"], 5.0, 7.0, 24, decoder=decoder) is dense  # cached
    assert V.decode_stats()["window_decodes"] == before + 1
    # a clip that kept every frame is already dense: no second decode
    assert every.dense(5.0, 7.0, 24) is every


def test_clip_dense_and_question_videos_use_window_decodes(clips, monkeypatch):
    pol = V.SamplingPolicy(fps=1.0, min_frames=4, max_frames=12, max_side=448)
    monkeypatch.setattr(V, "_POLICY", pol)
    clip = V.load_video(clips["long"])
    dense = clip.dense(5.0, 7.0, 16)
    assert dense is not clip and len(dense.window(5.0, 7.0)) == 16 and dense.duration == clip.duration
    assert clip.dense(5.0, 7.0, 1) is clip  # already dense enough
    assert V.sampling_of(dense)["window"] == [5.0, 7.0]


def test_frame_cache_is_bounded_in_bytes(clips):
    V.clear_cache()
    from mvx_tasks import frame_cache

    old = (frame_cache.CACHE_BYTES, frame_cache.CACHE_SIZE)
    try:
        a = V.load_video(clips["plain"])  # 72 x 240 x 320 x 3 = 16.6 MB
        V.configure(cache_mb=20)
        V.load_video(clips["long"], max_frames=72)
        stats = V.decode_stats()
        assert stats["cached_bytes"] <= 20 * 2 ** 20 and stats["cached_clips"] == 1
        assert V.load_video(clips["plain"]) is not a  # evicted, decoded again
    finally:
        V.configure(cache_mb=old[0] // 2 ** 20, cache_size=old[1])


def _old_frames(path: str, n: int) -> np.ndarray:
    """The frames group's frames before the rewrite (frozen): decord decodes 256 uniform frames of the
    whole file at full size, then ``n`` are picked uniformly among them (no resize below 448 px)."""
    import decord

    vr = decord.VideoReader(str(path), num_threads=1)
    kept = vr.get_batch(list(map(int, V.uniform_indices(len(vr), 256)))).asnumpy()
    return kept[V.uniform_indices(len(kept), n)]


def test_frames_group_sends_the_same_frames_as_before_for_synthetic_clips(tmp_path):
    from mvx_tasks import harness
    from mvx_tasks.synth import generate

    root = tmp_path / "synth"
    generate(root, per_task=1, seed=0, tasks=["CNT"], progress=False, workers=1)
    doc = json.loads((root / "data.jsonl").read_text().splitlines()[0])
    for v in doc["videos"]:
        v["path"] = str(root / v["path"])
    V.clear_cache()
    for n in (8, 32):
        sent = harness._frames(doc, n, with_times=True)
        for (label, imgs, times), v in zip(sent, doc["videos"]):
            old = _old_frames(v["path"], n)
            assert np.array_equal(np.stack([np.asarray(i) for i in imgs]), old), label  # pixel-identical
    msgs = harness.frames_doc_to_messages(doc, {"n_frames": 4})
    meta = msgs[0]["content"][0]["metadata"]
    assert meta["frames_per_video"] == 4 and len(meta["timestamps"]) == 4 and meta["video"] == doc["videos"][0]["label"]


def test_one_decode_of_an_hd_clip_stays_within_kept_plus_the_budget(tmp_path):
    """Memory bound, measured in a fresh process (Linux): 1080p in, peak RSS growth during a decode <= kept + 250 MB.
    (Before the rewrite the PyAV path held every full-size frame: 48 x 6.2 MB = 300 MB for this clip.)"""
    path = make_clip(tmp_path / "hd.mp4", 1920, 1080, 2, 24, gop=24)
    code = textwrap.dedent(f"""
        import gc, json
        from pathlib import Path
        import numpy, av, decord, cv2
        from mvx_tasks import video_decoder as video
        def mb(field):
            return [int(x.split()[1]) / 1024 for x in Path("/proc/self/status").read_text().splitlines()
                    if x.startswith(field + ":")][0]
        out = {{}}
        for dec in ("av", "decord"):
            gc.collect()
            base = mb("VmRSS")
            Path("/proc/self/clear_refs").write_text("5")  # peak mark := now; imports do not count
            clip = video.load_video({str(path)!r}, decoder=dec)
            out[dec] = [clip.n_frames, clip.nbytes / 2 ** 20, mb("VmHWM") - base]
            video.clear_cache(); del clip
        print(json.dumps(out))
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    for dec, (n, kept_mb, grown_mb) in out.items():
        assert n == 48 and kept_mb == pytest.approx(48 * 252 * 448 * 3 / 2 ** 20)
        assert grown_mb <= kept_mb + 250, (dec, grown_mb, kept_mb)


def test_sama_tools_reread_a_window_densely_and_record_the_sampling(clips, monkeypatch):
    """The verifier's re-reads and temporal grounding go through QuestionVideos.clip(label, start, end,
    n_frames): on a long video (coarse uniform sampling) a windowed call decodes that window."""
    from sama_model.question import AgentQuestion, VideoRef
    from sama_model.tools.toolkit import BackendSpec, build_tools
    from sama_model.question_videos import QuestionVideos

    monkeypatch.setattr(V, "_POLICY", V.SamplingPolicy(fps=1.0, min_frames=4, max_frames=12, max_side=448))
    V.clear_cache()
    q = AgentQuestion("q1", "What moves?", {"A": "x", "B": "y"}, (VideoRef("Video A", str(clips["long"])),))
    tools = build_tools(QuestionVideos(q), {n: BackendSpec("lite") for n in ("video_reader", "temporal_grounding")})
    whole = tools["video_reader"](video="Video A", query="what is visible?", n_frames=8)
    assert whole.ok and whole.data["sampling"]["frames"] == 12 and whole.data["sampling"]["of"] == 288
    dense = tools["video_reader"](video="Video A", query="what is visible?", start=5.0, end=7.0, n_frames=32)
    assert dense.ok, dense.error
    assert dense.data["sampling"]["frames"] == 32 and dense.data["sampling"]["window"] == [5.0, 7.0]
    ground = tools["temporal_grounding"](video="Video A", query="the square moves", start=2.0, end=4.0)
    assert ground.ok, ground.error
    assert ground.data["sampling"]["frames"] == V.WINDOW_MIN_FRAMES > 2  # the uniform sampling had 2 there
