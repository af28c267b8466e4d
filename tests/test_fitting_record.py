"""mvx_tasks/fitting_record.py: one record of every seed read while fitting or choosing the offline profile, and the
scripts that refuse recorded seeds for held-out figures."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from mvx_tasks import fitting_record as fr

ROOT = Path(__file__).resolve().parents[1]


def test_seed_lists_and_ranges_parse_and_bad_ones_fail_naming_the_row():
    assert fr.parse_seeds([1, "3-5", 9], "row") == frozenset({1, 3, 4, 5, 9})
    for bad in (["7-3"], ["x"], ["1-"], [True]):
        with pytest.raises(ValueError, match="row: seed"):
            fr.parse_seeds(bad, "row")


def test_the_shipped_record_holds_what_the_history_says():
    # every composite seed up to 130 was read; the next held-out figure starts at 131
    assert fr.recorded_seeds("real_composite") == frozenset(range(1, 131))
    assert fr.next_free("real_composite") == 131
    assert fr.recorded_seeds("scene_movers") == {1, 2}
    # the fitted files, on the seeds their own "fitted_on" names
    fitted = {u.where: u.seeds for u in fr.load()[1] if u.how == "fitted"}
    assert fitted["sama_model/backends/lite/fitted/follow_classes.json"] == {1, 3, 4, 7, 8, 9}
    assert fitted["sama_model/backends/lite/fitted/motion_classes.json"] == {1, 3, 4, 7, 8, 9}
    assert fitted["sama_model/backends/lite/fitted/shape_classes.json"] == {51, 52}
    # the generalisation sets were used to choose RID's gates: not "never used while fitting"
    gates = [u for u in fr.uses_of("mvx_synth_default", 202) if "camera gates" in u.what]
    assert [(u.how, u.commit) for u in gates] == [("chosen", "c4aff80")]
    assert any("CAMERA_MOVING_PX" in u.what for u in fr.uses_of("mvx_synth_hard", 0))
    # seeds from the old FITTING_SEEDS comment that the tuple left out
    for seed in (98, 99, 100, 103, 105, 121, 47, 55, 79, 87, 122, 129):
        assert fr.uses_of("real_composite", seed), seed
    assert fr.uses_of("real_composite", 131) == []
    from mvx_tasks import real_composite
    assert not hasattr(real_composite, "FITTING_SEEDS")  # the record is the one place


def _seeds_named(text: str) -> set[int]:
    text = re.sub(r"\d+ (clips|videos|segments)", "", text)
    return {int(x) for x in re.findall(r"seeds? (\d+)", text)} | \
        {int(x) for m in re.findall(r"seeds ([\d, ]+)", text) for x in re.findall(r"\d+", m)}


def test_every_fitted_file_names_seeds_the_record_holds_as_its_fit():
    """A refit that changes a fitted file's seeds without the record fails here."""
    lite = ROOT / "sama_model" / "backends" / "lite" / "fitted"
    sets = {"follow_classes.json": "real_composite", "motion_classes.json": "real_composite",
            "shape_classes.json": "shape_clips"}
    for name, set_name in sets.items():
        fitted_on = json.loads((lite / name).read_text())["fitted_on"]
        named = _seeds_named(fitted_on)
        assert named, name
        recorded = {s for u in fr.load()[1] if u.how == "fitted" and u.where.endswith(name) for s in u.seeds}
        assert named == recorded, (name, sorted(named), sorted(recorded))
        assert all(u.set == set_name for u in fr.load()[1] if u.how == "fitted" and u.where.endswith(name))


def _set(folder: Path, manifest: str, seed: int, **extra) -> Path:
    folder.mkdir(parents=True)
    (folder / manifest).write_text(json.dumps({"seed": seed, **extra}))
    return folder


def test_refusal_says_what_each_seed_was_used_for_and_which_are_free(tmp_path):
    with pytest.raises(fr.RecordedSeedError) as err:
        fr.refuse_recorded("real_composite", [131, 3, 72], "a test figure")
    msg = str(err.value)
    assert msg.startswith("a test figure cannot rest on seeds 3, 72 of real_composite")
    assert "real_composite seed 3: fitted: follow ensemble" in msg and "(8a9cc0f)" in msg
    assert "real_composite seed 72: read:" in msg and "from 131 on" in msg
    fr.refuse_recorded("real_composite", [131, 132])  # free seeds pass
    with pytest.raises(KeyError, match="has no set 'nope'"):
        fr.refuse_recorded("nope", [1])

    comp = _set(tmp_path / "c", "real_composite.json", 3, crf=20)
    synth = _set(tmp_path / "s", "synth.json", 202, difficulty="default")
    hard = _set(tmp_path / "h", "synth.json", 5, difficulty="hard")
    other = tmp_path / "plain"
    other.mkdir()
    assert fr.folder_set(comp) == ("real_composite", 3) and fr.folder_set(synth) == ("mvx_synth_default", 202)
    assert fr.folder_set(other) is None
    assert fr.describe_folder(hard) == f"{hard}: mvx_synth_hard seed 5, held out (not in the fitting record)"
    assert fr.describe_folder(synth).endswith("mvx_synth_default seed 202, NOT held out (checked; chosen; read)")
    with pytest.raises(fr.RecordedSeedError, match="(?s)seeds 202 of mvx_synth_default.*pass --allow-recorded"):
        fr.guard_folders([hard, synth, other], False, "x")
    assert fr.guard_folders([hard, other], False, "x")[0].endswith("held out (not in the fitting record)")
    assert len(fr.guard_folders([comp, synth], True, "x")) == 2


def test_identity_stability_refuses_a_recorded_set_before_reading_it(tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import identity_stability

    a = _set(tmp_path / "a", "real_composite.json", 28, crf=20)
    b = _set(tmp_path / "b", "real_composite.json", 28, crf=30)
    with pytest.raises(SystemExit):
        identity_stability.main([str(a), str(b)])
    err = capsys.readouterr().err
    assert "seeds 28 of real_composite" in err and "MOVING_SCORE_WEIGHTS checked" in err


def test_command_lists_the_record(capsys):
    assert fr.main([]) == 0
    out = capsys.readouterr().out
    assert "real_composite:" in out and "recorded (130): 1-130" in out and "next free seed: 131" in out
    assert fr.main(["real_composite", "131", "9"]) == 0
    out = capsys.readouterr().out
    assert "real_composite seed 131: held out (not recorded)" in out and "checked: the actor's seeding" in out
    assert fr.main(["nope"]) == 2


def test_every_place_the_record_names_exists():
    """A move of a fitted file or module must move its record line with it (the lite reorganisation did not)."""
    missing = []
    for use in fr.load()[1]:
        for part in use.where.split(","):
            words = re.sub(r"\s*\(.*", "", part.strip()).split()
            path = words[0] if words else ""  # "a/b.py NAME": the file, then the constant or function in it
            if "/" in path and not (ROOT / path).exists():
                missing.append((use.what[:50], path))
    assert not missing, missing
