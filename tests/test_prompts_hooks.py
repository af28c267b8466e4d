"""What models are shown: labelled videos or labelled frames, never the answer or meta."""
import json

import pytest

from fixtures import make_dataset
from mvx_tasks import harness
from mvx_tasks.data import load_local, sample_to_doc


@pytest.fixture()
def doc(tmp_path, monkeypatch):
    root = make_dataset(tmp_path, tasks=["CNT"], per_task=1, video_frames=6)
    return sample_to_doc(load_local(root)[0], root)


def test_text_lists_the_video_order_and_options(doc):
    text = harness.doc_to_text(doc, {"pre_prompt": "", "post_prompt": "Answer with the letter."})
    assert text.splitlines() == [
        "You are given 5 videos, in this order: Reference, Video A, Video B, Video C, Video D.",
        "Which candidate matches the reference? (cnt-0)", "Options:", "A. Video A", "B. Video B",
        "C. Video C", "D. Video D", "Answer with the letter."]
    assert "fixture" not in text  # meta never shown


def test_messages_interleave_each_label_with_its_video(doc):
    [msg] = harness.doc_to_messages(doc, None)
    content = msg["content"]
    assert [c["type"] for c in content] == ["text", "video"] * 5 + ["text"]
    assert [c["text"] for c in content[:-1:2]] == ["Reference:", "Video A:", "Video B:", "Video C:", "Video D:"]
    assert [c["url"] for c in content[1::2]] == [v["path"] for v in json.loads(doc["videos"])]
    assert harness.doc_to_visual(doc) == [v["path"] for v in json.loads(doc["videos"])]


def test_frames_presentation_labels_image_numbers(doc):
    kw = {"n_frames": 3, "post_prompt": "Answer."}
    images = harness.frames_doc_to_visual(doc, kw)
    assert len(images) == 15 and images[0].size == (64, 64)
    text = harness.frames_doc_to_text(doc, kw)
    assert text.splitlines()[0] == ("You are given 5 videos, each shown as frames sampled uniformly in time: "
                                    "images 1-3 are Reference; images 4-6 are Video A; images 7-9 are Video B; "
                                    "images 10-12 are Video C; images 13-15 are Video D.")
    [msg] = harness.frames_doc_to_messages(doc, kw)
    kinds = [c["type"] for c in msg["content"]]
    assert kinds == (["text"] + ["image"] * 3) * 5 + ["text"]
    assert msg["content"][4]["text"] == "Video A (3 frames):"


def test_process_results_scores_and_flags(doc):
    out = harness.process_results(doc, ["The answer is (A)."])
    assert out["mvx_acc"]["correct"] is True and out["mvx_unparsed"] == 0 and out["mvx_failed"] == 0
    out = harness.process_results(doc, ["I am not sure."])
    assert out["mvx_acc"]["correct"] is False and out["mvx_unparsed"] == 1
    assert harness.aggregate_accuracy([out["mvx_acc"], harness.process_results(doc, ["A"])["mvx_acc"]]) == 50.0


def test_unknown_hook_names_raise_attribute_error():
    assert callable(harness.bench_docs_cnt)
    with pytest.raises(AttributeError):
        harness.nothing_here  # noqa: B018
