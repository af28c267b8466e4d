"""The task registry: the paper's table of tasks, and extending it."""
import pytest

from mvx_tasks import registry
from mvx_tasks.registry import TaskSpec, get_task


def test_bench_tasks_in_paper_order_with_counts():
    tasks = registry.bench_tasks()
    assert [t.code for t in tasks] == ["CNT", "FD", "AM", "ART", "RID", "MVR", "VS", "CR", "DE", "SEQ", "SPR"]
    assert [t.n_questions for t in tasks] == [150, 100, 150, 150, 150, 106, 69, 150, 150, 117, 150]
    assert registry.total_questions() == 1442


def test_levels_and_chance():
    assert [t.code for t in registry.tasks_by_level("perception")] == ["CNT", "FD", "PRB"]  # PRB: the probe, not bench
    assert [t.code for t in registry.bench_tasks() if t.level == "perception"] == ["CNT", "FD"]
    assert [t.code for t in registry.tasks_by_level("matching")] == ["AM", "ART", "RID", "MVR", "VS"]
    assert [t.code for t in registry.tasks_by_level("reasoning")] == ["CR", "DE", "SEQ", "SPR"]
    assert {t.code: t.chance for t in registry.bench_tasks() if t.n_options == 2} == {"FD": 0.5, "RID": 0.5, "DE": 0.5}
    assert get_task("SEQ").n_options is None and get_task("SEQ").chance == pytest.approx(0.405)
    # the paper's Random row, question-weighted, is 33.2
    from mvx_tasks.metrics import weighted_overall
    assert round(weighted_overall({t.code: t.chance * 100 for t in registry.bench_tasks()}), 1) == 33.2


def test_lookup_is_case_insensitive_and_unknown_names_the_codes():
    assert get_task("cnt").name == "Counting"
    assert get_task(" spr ").slug == "spr"
    with pytest.raises(KeyError) as e:
        get_task("XYZ")
    assert "unknown task code 'XYZ'" in str(e.value) and "CNT" in str(e.value)


def test_register_task_validates():
    with pytest.raises(ValueError, match="level 'hard' is not one of"):
        registry.register_task(TaskSpec("ZZT", "Z", "hard", 0, 4, 0.25))
    with pytest.raises(ValueError, match="alphanumeric"):
        registry.register_task(TaskSpec("Z-T", "Z", "reasoning", 0, 4, 0.25))
    with pytest.raises(ValueError, match="already registered"):
        registry.register_task(TaskSpec("CNT", "Other", "perception", 1, 4, 0.25))


def test_registry_file_from_environment(tmp_path, monkeypatch):
    f = tmp_path / "extra.yaml"
    f.write_text("tasks:\n  - {code: toy, name: Toy Task, level: reasoning, n_options: 3, chance: 0.3333}\n")
    monkeypatch.setenv("MVX_TASK_REGISTRY", str(f))
    t = get_task("TOY")
    assert (t.code, t.name, t.level, t.n_options, t.n_questions) == ("TOY", "Toy Task", "reasoning", 3, 0)
    assert "TOY" in [x.code for x in registry.all_tasks()]
    assert "TOY" not in [x.code for x in registry.bench_tasks()]
    bad = tmp_path / "bad.yaml"
    bad.write_text("tasks:\n  - {code: T2, name: x, level: reasoning, colour: red}\n")
    with pytest.raises(ValueError, match="unknown fields \\['colour'\\]"):
        registry.load_registry_file(bad)
