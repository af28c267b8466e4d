"""benchmarks/actor_stability.py: the AM actor in two encodings of the same questions, seeding told
apart from following and naming."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from test_lite_actor import actor_clip

from mvx_tasks.synth.encode import encode_mp4
from sama_model.backends.lite.movers.actor import actor_follow, motion_actor
from sama_model.backends.lite.shared.frame_memo import FRAME_MEMO

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import actor_stability as st


def _folder(root: Path, crf: int) -> Path:
    """One AM question (a sliding and an orbiting actor over a panning texture) encoded at ``crf``, and
    an RID question the default task filter skips."""
    (root / "videos").mkdir(parents=True)
    for name, motion in (("ref", "slide"), ("a", "orbit")):
        encode_mp4(actor_clip(motion).frames, root / "videos" / f"{name}.mp4", fps=10, crf=crf)
    rows = [{"id": "am-0", "task": "AM", "question": "Which candidate moves like the reference?",
             "options": {"A": "Video A"}, "answer": "A",
             "videos": [{"label": "Reference", "path": "videos/ref.mp4"}, {"label": "Video A", "path": "videos/a.mp4"}],
             "meta": {"reference_action": "slide", "actions": {"Video A": "orbit"}}},
            {"id": "rid-0", "task": "RID", "question": "Same?", "options": {"A": "Yes", "B": "No"}, "answer": "A",
             "videos": [{"label": "Video 1", "path": "videos/ref.mp4"}, {"label": "Video 2", "path": "videos/a.mp4"}]}]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("stability")
    return _folder(base / "crf20", 20), _folder(base / "crf30", 30)


def test_actor_follow_is_motion_actors_choice() -> None:
    clip = actor_clip("orbit")
    _, chosen = actor_follow(clip)
    FRAME_MEMO.clear()
    actor = motion_actor(clip)
    FRAME_MEMO.clear()
    assert chosen is not None and actor is not None
    assert actor["on_movers"] == round(chosen.on_movers, 3) and actor["seed_track"] == chosen.track
    assert chosen.follow.steps[0] <= chosen.seed[0] <= chosen.follow.steps[-1]


def test_one_encoding_against_itself_agrees_everywhere(sets: tuple[Path, Path]) -> None:
    a, _ = sets
    res = st.compare_folders(str(a), str(a), {"AM"})
    t = res["totals"]
    # only the AM question's two videos; each actor is found, seeded and followed identically
    assert [(v["question"], v["label"]) for v in res["videos"]] == [("am-0", "Reference"), ("am-0", "Video A")]
    assert t == {"videos": 2, "failed": 0, "pixel_change_mean": 0.0, "same_names": 2, "actor_in_both": 2, "same_seed": 2,
                 "seed_a_followed_in_b": 2, "same_names_from_seed_a": 2, "path_px_median": 0.0, "path_px_over_5": 0,
                 "scored": 2, "right_a": 2, "right_b": 2}
    assert res["videos"][0]["names_a"] == ["linear"] and res["videos"][1]["names_a"] == ["orbiting"]


def test_two_encodings_and_a_broken_video(sets: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = sets
    res = st.compare_folders(str(a), str(b), {"AM", "RID"}, workers=2)
    t = res["totals"]
    assert t["videos"] == 4 and t["failed"] == 0 and t["scored"] == 2
    assert 3.0 < t["pixel_change_mean"] < 8.0  # CRF 30 against CRF 20 (5.0 on these clips)
    assert t["same_seed"] <= t["actor_in_both"] and t["same_names_from_seed_a"] <= t["seed_a_followed_in_b"] <= 4
    # the re-encoded clips keep these clear actions: named right in both encodings
    assert (t["right_a"], t["right_b"]) == (2, 2)
    # one video of B truncated: recorded with the decoder's reason, the other compared
    broken = tmp_path / "broken"
    shutil.copytree(b, broken)
    data = (broken / "videos" / "a.mp4").read_bytes()
    (broken / "videos" / "a.mp4").write_bytes(data[:200])
    res = st.compare_folders(str(a), str(broken), {"AM"})
    assert res["totals"]["videos"] == 2 and res["totals"]["failed"] == 1
    bad = [v for v in res["videos"] if "error" in v]
    assert [v["label"] for v in bad] == ["Video A"] and bad[0]["error"]
    text = st.report(res)
    assert "am-0 Video A (videos/a.mp4): " in text and "| compared | 2 (1 failed to decode) |" in text


def test_report_lists_the_videos_whose_names_moved() -> None:
    video = {"question": "q", "label": "Video B", "path": "v.mp4", "names_a": ["bouncing"], "names_b": ["zig-zag"],
             "same_names": False, "same_seed": False, "names_b_from_seed_a": ["bouncing"], "path_px": 0.4}
    totals = {"videos": 1, "failed": 0, "pixel_change_mean": 2.5, "same_names": 0, "actor_in_both": 1, "same_seed": 0, "seed_a_followed_in_b": 1,
              "same_names_from_seed_a": 1, "path_px_median": 0.4, "path_px_over_5": 0}
    text = st.report({"a": "A", "b": "B", "totals": totals, "videos": [video]})
    assert "| A's seed followed in B gives A's names | 1 of 1 |" in text
    assert "| mean absolute pixel change, B vs A (grey levels) | 2.5 |" in text
    assert "| q | Video B | ['bouncing'] | ['zig-zag'] | ['bouncing'] | False | 0.4 |" in text
    assert "true action named" not in text  # no generator metadata, no scoring row


def test_cli_refuses_a_folder_without_data(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="data.jsonl not found"):
        st.main([str(tmp_path), str(tmp_path)])


def test_pixel_noise_against_the_same_folder(sets: tuple[Path, Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """One folder against its own frames plus ±2 grey-level noise: B's frames really differ (the same
    seed's follow is not the very same path), these clear actions keep their names, and the report says
    what B was."""
    a, _ = sets
    out = tmp_path / "noise.json"
    assert st.main([str(a), "--pixel-noise", "2", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"Actor stability: {a} vs {a} + ±2 grey-level noise")
    res = json.loads(out.read_text())
    assert res["pixel_noise"] == 2 and res["totals"]["videos"] == 2 and res["totals"]["failed"] == 0
    assert (res["totals"]["right_a"], res["totals"]["right_b"], res["totals"]["same_names"]) == (2, 2, 2)
    # every value moved by -2..2: mean |change| 1.2 less a little where 0 or 255 clips it, give or take the
    # sampling error of a mean over the clip's values (|noise| has sd 0.748; the noise is seeded by the
    # video's path, which differs from run to run) and the report's rounding to 3 decimals
    n = actor_clip("slide").frames.size
    top = 1.2 + 4 * 0.748 / n ** 0.5 + 0.0005
    assert all(1.1 < v["pixel_change"] <= top for v in res["videos"]), ([v["pixel_change"] for v in res["videos"]], top)
    assert "| mean absolute pixel change, B vs A (grey levels) | " in text


def test_cli_needs_a_second_folder_or_noise(sets: tuple[Path, Path]) -> None:
    with pytest.raises(SystemExit):
        st.main([str(sets[0])])
