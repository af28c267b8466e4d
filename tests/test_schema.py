"""The canonical sample schema and its error messages (id, file, fix)."""
import json

import pytest

from mvx_tasks.schema import SchemaError, read_jsonl, validate_sample, write_jsonl


def good(**over):
    d = {"id": "q1", "task": "CNT", "question": "Which video has as many cups as the reference?",
         "options": {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}, "answer": "C",
         "videos": [{"label": "Reference", "path": "videos/r.mp4", "subtitle": "subs/r.srt"},
                    {"label": "Video A", "path": "videos/a.mp4"}, {"label": "Video B", "path": "videos/b.mp4"},
                    {"label": "Video C", "path": "videos/c.mp4"}, {"label": "Video D", "path": "videos/d.mp4"}],
         "meta": {"counts": [2, 1, 3, 2, 4]}}
    d.update(over)
    return d


def test_valid_sample_round_trip(tmp_path):
    s = validate_sample(good())
    assert s.answer == "C" and s.letters == ["A", "B", "C", "D"]
    assert [v.label for v in s.videos] == ["Reference", "Video A", "Video B", "Video C", "Video D"]
    assert s.videos[0].subtitle == "subs/r.srt" and s.videos[1].subtitle is None
    assert "answer" not in s.public_dict() and "meta" not in s.public_dict()
    write_jsonl([s, validate_sample(good(id="q2"))], tmp_path / "data.jsonl")
    back = read_jsonl(tmp_path / "data.jsonl")
    assert back[0] == s and back[1].id == "q2"


def test_lenient_forms_are_normalised():
    s = validate_sample(good(answer="(c)", task="cnt", options=["one", "two", "three", "four"]))
    assert (s.answer, s.task, s.options["D"]) == ("C", "CNT", "four")


@pytest.mark.parametrize("over,needle", [
    ({"answer": None}, "question 'q1' (data.jsonl:7): missing field(s) answer. Fix: every line needs"),
    ({"task": "XYZ"}, "question 'q1' (data.jsonl:7): unknown task code 'XYZ'"),
    ({"answer": "E"}, "answer 'E' is not one of the option letters ['A', 'B', 'C', 'D']"),
    ({"options": {"A": "x", "C": "y", "D": "z", "E": "w"}}, "option letters ['A', 'C', 'D', 'E'] are not consecutive"),
    ({"options": {"A": "x", "B": "y"}}, "task CNT has 4 options per question, this one has 2"),
    ({"videos": []}, "videos must be a non-empty list"),
    ({"videos": [{"label": "R", "path": "../outside.mp4"}]}, "leaves the dataset folder ('..')"),
    ({"videos": [{"label": "R", "path": "/abs/x.mp4"}]}, "is absolute. Fix: write it relative"),
    ({"videos": [{"label": "R", "path": "videos/x.txt"}]}, "has extension '.txt'"),
    ({"videos": [{"label": "R", "path": "a.mp4"}, {"label": "R", "path": "b.mp4"}]}, "labels ['R', 'R'] are not unique"),
    ({"meta": [1]}, "meta must be an object"),
])
def test_errors_name_the_question_and_the_fix(over, needle):
    with pytest.raises(SchemaError) as e:
        validate_sample(good(**over), where="data.jsonl:7")
    msg = str(e.value)
    assert needle in msg
    assert "(data.jsonl:7)" in msg and "Fix:" in msg


def test_read_jsonl_reports_line_numbers(tmp_path):
    p = tmp_path / "data.jsonl"
    p.write_text(json.dumps(good()) + "\n\n{not json}\n")
    with pytest.raises(SchemaError) as e:
        read_jsonl(p)
    assert f"({p}:3): not valid JSON" in str(e.value)
