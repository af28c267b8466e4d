"""MVX-Synth: determinism, schema, unique answers from meta, balance, decodability, caching."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mvx_tasks.registry import BENCH_CODES
from mvx_tasks.schema import read_jsonl
from mvx_tasks.subtitles import read_subtitles
from mvx_tasks.synth import DIFFICULTIES, ensure_synth, generate, plan
from mvx_tasks.synth import cache as cache_mod
from mvx_tasks.synth.camera import View, camera_path, window_matrix
from mvx_tasks.synth.cnt import satisfies
from mvx_tasks.synth.common import balanced_position, slug
from mvx_tasks.synth.fd import _manipulator
from mvx_tasks.synth.seq import layout
from mvx_tasks.synth.spr import camera_for, valid

PER_TASK = 3


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    return generate(tmp_path_factory.mktemp("synth") / "set", per_task=PER_TASK, seed=0, progress=False)


@pytest.fixture(scope="module")
def planned():
    return plan(per_task=12, seed=3, difficulty="default")


# ---------------------------------------------------------------- layout and schema
def test_every_task_present_with_requested_count_and_valid_lines(small):
    samples = read_jsonl(small / "data.jsonl")  # validates every line
    assert Counter(s.task for s in samples) == {c: PER_TASK for c in BENCH_CODES}
    assert [s.id for s in samples if s.task == "CNT"] == ["synth-cnt-0000", "synth-cnt-0001", "synth-cnt-0002"]
    for s in samples:
        for v in s.videos:
            assert v.path == f"videos/{s.id}_{slug(v.label)}.mp4"
            assert (small / v.path).stat().st_size > 1000


def test_label_and_option_conventions(planned):
    for s in planned:
        labels = [v.label for v in s.videos]
        if s.task == "FD":
            assert labels == ["Video A", "Video B"] and s.options == {"A": "Video A", "B": "Video B"}
        elif s.task == "RID":
            assert labels == ["Video 1", "Video 2"] and s.options == {"A": "Yes", "B": "No"}
        elif s.task == "DE":
            assert labels == ["Premise", "Update"] and s.options == {"A": "Strengthens", "B": "Weakens"}
        elif s.task == "SEQ":
            k = s.meta["n_clips"]
            assert labels == [f"Clip {i + 1}" for i in range(k)] and 2 <= len(s.options) <= 4
            assert all(sorted(o.split(", ")) == sorted(labels) for o in s.options.values())
        else:
            assert labels == ["Reference", "Video A", "Video B", "Video C", "Video D"]
            assert s.options == {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}


def test_question_text_does_not_single_out_the_answer(planned):
    for s in planned:
        counts = {len(re.findall(rf"\b{re.escape(text)}\b", s.question, re.I)) for text in s.options.values()}
        assert len(counts) == 1, (s.id, s.question)


# ---------------------------------------------------------------- answers from meta
def _check_answer(s) -> None:
    m, ans = s.meta, s.options[s.answer]
    cands = ["Video A", "Video B", "Video C", "Video D"]
    if s.task == "CNT":
        hits = [c for c in cands if satisfies(m["relation"], m["counts"][c], m["reference_count"])]
    elif s.task == "FD":
        hits = [m["manipulated"]]
    elif s.task == "AM":
        hits = [c for c in cands if m["actions"][c] == m["reference_action"]]
    elif s.task == "ART":
        hits = [c for c in cands if m["styles"][c] == m["reference_style"]]
    elif s.task == "RID":
        same = m["identities"]["Video 1"] == m["identities"]["Video 2"]
        assert same == m["same_identity"]
        hits = ["Yes" if same else "No"]
    elif s.task == "MVR":
        hits = [c for c in cands if m["candidates"][c]["kind"] == "same event"]
    elif s.task == "VS":
        hits = [c for c in cands if m["candidates"][c]["kind"] == "near-duplicate"]
    elif s.task == "CR":
        hits = [c for c in cands if m["candidates"][c]["correct_index"] == m["reference"]["correct_index"]]
        for sc in [m["reference"], *m["candidates"].values()]:
            truth_yes = sc["fact"]  # the fact decides the counterfactual answer
            assert sc["options"][sc["correct_index"] - 1].startswith("Yes" if truth_yes else "No")
    elif s.task == "DE":
        hits = [m["label"].capitalize()]
    elif s.task == "SEQ":
        shown = m["shown_segments"]
        assert m["true_order"] == sorted(shown, key=shown.get)
        hits = [o for o in s.options.values() if o == ", ".join(m["true_order"])]
    elif s.task == "SPR":
        ref = set(m["reference_trends"])
        hits = [c for c in cands if ref & set(m["trends"][c])]
        assert all(valid(frozenset(t)) for t in [*m["trends"].values(), m["reference_trends"]])
    else:
        raise AssertionError(s.task)
    assert hits == [ans], (s.id, hits, ans)


def test_answers_are_unique_by_meta(planned):
    for s in planned:
        _check_answer(s)


@pytest.mark.parametrize("difficulty", ["easy", "hard"])
def test_answers_unique_at_other_difficulties(difficulty):
    for s in plan(per_task=4, seed=11, difficulty=difficulty):
        _check_answer(s)
        assert s.meta["synth"]["difficulty"] == difficulty


def test_difficulty_changes_negatives():
    easy = plan(per_task=8, seed=5, difficulty="easy", tasks="ART,RID")
    hard = plan(per_task=8, seed=5, difficulty="hard", tasks="ART,RID")
    n_changed = lambda ss: [len(v) for s in ss if s.task == "ART" for v in s.meta["attributes_changed"].values() if v]
    assert min(n_changed(easy)) >= 3 and max(n_changed(hard)) <= 2
    rid_parts = [len(s.meta["differing_parts"]) for s in hard if s.task == "RID" and not s.meta["same_identity"]]
    assert rid_parts and set(rid_parts) == {1}


# ---------------------------------------------------------------- balance
def test_option_letters_balanced(planned):
    for code in BENCH_CODES:
        answers = [s.answer for s in planned if s.task == code]
        share = max(Counter(answers).values()) / len(answers)
        if code == "SEQ":
            assert share <= 0.45
        elif code in ("FD", "RID", "DE"):
            assert Counter(answers) == {"A": 6, "B": 6}
        else:
            assert Counter(answers) == {"A": 3, "B": 3, "C": 3, "D": 3}


def test_balanced_position_blocks_and_seq_layout():
    assert sorted(balanced_position(0, "CNT", i, 4) for i in range(4, 8)) == [0, 1, 2, 3]
    ks = [layout(0, i)[0] for i in range(8)]
    assert sorted(ks[:4]) == [2, 2, 3, 4] and sorted(ks[4:]) == [2, 2, 3, 4]
    chance = np.mean([1 / layout(0, i)[0] for i in range(40)])
    assert chance == pytest.approx((0.5 + 0.5 + 1 / 3 + 0.25) / 4)
    assert all(0 <= pos < k for k, pos in (layout(0, i) for i in range(40)))


# ---------------------------------------------------------------- determinism
def test_same_seed_same_bytes_and_frames(tmp_path):
    from mvx_tasks.video_decoder import load_video

    a = generate(tmp_path / "a", per_task=2, seed=7, tasks="CNT,SEQ", progress=False, workers=1)
    b = generate(tmp_path / "b", per_task=2, seed=7, tasks="CNT,SEQ", progress=False)
    c = generate(tmp_path / "c", per_task=1, seed=8, tasks="CNT", progress=False, workers=1)
    assert (a / "data.jsonl").read_bytes() == (b / "data.jsonl").read_bytes()
    names = sorted(p.name for p in (a / "videos").iterdir())
    assert names == sorted(p.name for p in (b / "videos").iterdir())
    assert len(names) == 2 * 5 + sum(s.meta["n_clips"] for s in read_jsonl(a / "data.jsonl") if s.task == "SEQ")
    for name in names:
        assert (a / "videos" / name).read_bytes() == (b / "videos" / name).read_bytes(), name
    for name in names[:3]:
        fa, fb = load_video(a / "videos" / name).frames, load_video(b / "videos" / name).frames
        assert fa.shape[0] >= 16 and np.array_equal(fa, fb)
    first_a = json.loads((a / "data.jsonl").read_text().splitlines()[0])
    first_c = json.loads((c / "data.jsonl").read_text().splitlines()[0])
    assert first_a["id"] == first_c["id"] == "synth-cnt-0000" and first_a["meta"] != first_c["meta"]


def test_plan_matches_generated_lines(small):
    lines = (small / "data.jsonl").read_text(encoding="utf-8").splitlines()
    assert [s.to_dict() for s in plan(per_task=PER_TASK, seed=0)] == [json.loads(x) for x in lines]


# ---------------------------------------------------------------- decoding
def test_videos_decode_with_decord_pyav_and_opencv(small):
    import av
    import cv2
    import decord

    samples = read_jsonl(small / "data.jsonl")
    for s in [x for x in samples if x.id.endswith("-0000")]:
        for v in s.videos:
            p = str(small / v.path)
            n = 16 if s.task == "SEQ" else 24
            vr = decord.VideoReader(p)
            assert len(vr) == n and vr[0].shape == (144, 192, 3) and round(vr.get_avg_fps()) == 8
            with av.open(p) as c:
                st = c.streams.video[0]
                assert st.codec_context.name == "h264" and st.codec_context.pix_fmt == "yuv420p"
                assert sum(1 for _ in c.decode(st)) == n
            cap = cv2.VideoCapture(p)
            frames = 0
            while cap.read()[0]:
                frames += 1
            cap.release()
            assert frames == n


def test_subtitles_written_and_parse(small):
    samples = read_jsonl(small / "data.jsonl")
    subs = [(s, v) for s in samples for v in s.videos if v.subtitle]
    assert {s.task for s, _ in subs} == {"CR", "DE"}
    for s, v in subs:
        segs = read_subtitles(small / v.subtitle)
        assert len(segs) == 1 and segs[0].start == 0.0 and segs[0].text


# ---------------------------------------------------------------- toolkit pieces
def test_camera_window_and_safe_box():
    m = window_matrix(View(160, 120, 1.0))
    assert np.allclose(m @ [0, 0, 1], [64.5, 48.5, 1]) and np.allclose(m @ [191, 143, 1], [255.5, 191.5, 1])
    cam = camera_path(5, View(160, 120, 1.0), View(170, 120, 1.0), ease=False)
    assert cam.safe_box(0) == pytest.approx((74.5, 48.5, 255.5, 191.5))


@pytest.mark.parametrize("trend,axis,sign", [("pan right", 0, 1), ("pan left", 0, -1), ("tilt down", 1, 1),
                                             ("tilt up", 1, -1)])
def test_spr_camera_moves_in_the_named_direction(trend, axis, sign):
    cam = camera_for(frozenset({trend}), np.random.default_rng(0), 0.0)
    centre = lambda m: (m @ [95.5, 71.5, 1])[:2]
    assert np.sign(centre(cam.mats[-1])[axis] - centre(cam.mats[0])[axis]) == sign
    assert abs(centre(cam.mats[-1])[1 - axis] - centre(cam.mats[0])[1 - axis]) < 1e-6


def test_spr_zoom_changes_window_scale():
    zin = camera_for(frozenset({"zoom in"}), np.random.default_rng(0), 0.0)
    zout = camera_for(frozenset({"zoom out"}), np.random.default_rng(0), 0.0)
    assert abs(zin.mats[-1][0, 0]) < abs(zin.mats[0][0, 0]) and abs(zout.mats[-1][0, 0]) > abs(zout.mats[0][0, 0])


def test_fd_freeze_and_clone_hooks_forge_exactly_the_region():
    frames = np.random.default_rng(0).uniform(0, 255, (4, 144, 192, 3)).astype(np.float32)
    facts = {"type": "freeze", "region_xywh": [10, 20, 30, 16], "from_frame": 1}
    hook = _manipulator(facts, np.random.default_rng(1), None)
    out = [hook(f.copy(), t) for t, f in enumerate(frames)]
    assert np.array_equal(out[3][20:36, 10:40], frames[1][20:36, 10:40])
    assert np.array_equal(out[3][:20], frames[3][:20]) and np.array_equal(out[0], frames[0])
    facts = {"type": "clone", "region_xywh": [10, 20, 30, 16], "from_frame": 0, "target_xy": [100, 50]}
    hook = _manipulator(facts, np.random.default_rng(1), None)
    f = hook(frames[2].copy(), 2)
    assert np.array_equal(f[50:66, 100:130], frames[2][20:36, 10:40]) and np.array_equal(f[:50], frames[2][:50])


def test_cnt_relation():
    assert [satisfies(r, 3, 3) for r in ("same", "greater", "less")] == [True, False, False]
    assert [satisfies(r, 4, 3) for r in ("same", "greater", "less")] == [False, True, False]


def test_bad_arguments_raise(tmp_path):
    with pytest.raises(ValueError, match="difficulty"):
        plan(per_task=1, difficulty="extreme")
    with pytest.raises(KeyError):
        plan(per_task=1, tasks="XYZ")
    assert set(DIFFICULTIES) == {"easy", "default", "hard"}


# ---------------------------------------------------------------- cache
def test_ensure_synth_env_cache_and_atomicity(tmp_path, monkeypatch):
    monkeypatch.setenv("MVX_SYNTH_DATA", str(tmp_path / "given"))
    assert ensure_synth(tmp_path / "cache") == tmp_path / "given"
    monkeypatch.delenv("MVX_SYNTH_DATA")

    def boom(*a, **k):
        Path(a[0], "partial.txt").write_text("x")
        raise RuntimeError("interrupted")

    monkeypatch.setattr(cache_mod, "generate", boom)
    with pytest.raises(RuntimeError):
        ensure_synth(tmp_path / "cache", per_task=1, seed=4)
    assert list((tmp_path / "cache").iterdir()) == []  # nothing half-written is left behind

    calls = []

    def fake(out, **kw):
        calls.append(kw)
        (Path(out) / "data.jsonl").write_text("")

    monkeypatch.setattr(cache_mod, "generate", fake)
    first = ensure_synth(tmp_path / "cache", per_task=1, seed=4, progress=False)
    again = ensure_synth(tmp_path / "cache", per_task=1, seed=4, progress=False)
    assert first == again == tmp_path / "cache" / "4-1-default" and len(calls) == 1
    assert calls[0] == {"per_task": 1, "seed": 4, "difficulty": "default", "progress": False}
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert cache_mod.default_cache_root() == tmp_path / "hf" / "mvx_synth"
