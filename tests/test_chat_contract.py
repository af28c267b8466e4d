"""lmms-eval's chat-model contract for sama, mvx_hf_chat and mvx_replay: ChatMessages in, GenerationResult
with TokenCounts out (plain text where lmms-eval lacks the type), multi-round refused, and rank and
device from the launcher."""
from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

import mvx_tasks.chat_contract as C
from sama_model.adapters.messages import items_from_chat


def test_messages_are_parsed_by_lmms_evals_chat_messages():
    from lmms_eval.protocol import ChatMessages

    raw = [{"role": "system", "content": "Be brief."},
           {"role": "user", "content": [{"type": "text", "text": "Video A:"}, {"type": "video", "url": "/d/a.mp4"},
                                        {"type": "audio", "url": "/d/a.wav"},
                                        {"type": "text", "text": "Q?", "metadata": {"frames": 8}}]}]
    chat = C.chat_messages(raw)
    assert isinstance(chat, ChatMessages) and C.chat_messages(chat) is chat
    assert chat.messages[0].content[0].text == "Be brief."  # a bare string is one text item
    assert chat.extract_media() == ([], ["/d/a.mp4"], ["/d/a.wav"])
    # SAMA reads user turns only, audio ignored, labels kept in order
    assert [(i.kind, i.value) for i in items_from_chat(raw)] == [("text", "Video A:"), ("video", "/d/a.mp4"),
                                                                 ("text", "Q?")]
    with pytest.raises(ValidationError):  # lmms-eval's own validation: an unknown role
        C.chat_messages([{"role": "narrator", "content": []}])
    with pytest.raises(ValidationError):  # a video item without its url
        C.chat_messages([{"role": "user", "content": [{"type": "video", "video": "/d/a.mp4"}]}])
    with pytest.raises(TypeError, match="not a list of chat messages"):
        C.chat_messages("just text")


def test_generation_output_with_token_counts_or_plain_text(monkeypatch):
    out = C.generation_output("Answer: B", input_tokens=1000, output_tokens=100)
    assert C.HAS_GENERATION_RESULT  # lmms-eval 0.7.3 here
    assert out.text == "Answer: B" and out.token_counts.to_dict() == {"input_tokens": 1000, "output_tokens": 100}
    assert C.generation_output("x").token_counts is None
    from lmms_eval.api.instance import unwrap_generation_output

    assert unwrap_generation_output(out)[0] == "Answer: B"
    monkeypatch.setattr(C, "HAS_GENERATION_RESULT", False)  # lmms-eval 0.6.1: no GenerationResult
    assert C.generation_output("Answer: B", input_tokens=5) == "Answer: B"


def test_chat_request_unpacks_the_doc():
    lm = SimpleNamespace(task_dict={"t": {"test": {3: {"id": "q3"}}}})
    req = C.chat_request(lm, SimpleNamespace(args=("ctx", lambda doc: [], {"temperature": 0}, 3, "t", "test")))
    assert (req.doc, req.doc_id, req.task, req.split, req.gen_kwargs) == ({"id": "q3"}, 3, "t", "test",
                                                                          {"temperature": 0})
    assert C.question_id(req.doc, "t", 3) == "q3" and C.question_id({"id": " "}, "t", 3) == "t-3"


def _multi_round_requests():
    from lmms_eval.api.instance import Instance

    return [Instance("generate_until_multi_round", ("ctx", lambda d: [], {}, 0, "mmsi_multiturn", "test"), idx=0,
                     metadata={"task": "mmsi_multiturn", "doc_id": 0, "repeats": 1})]


def test_multi_round_is_refused_clearly_by_every_adapter(tmp_path, monkeypatch):
    import test_sama_doubles as D

    from mvx_tasks.baselines.hf_chat import HFChat
    from mvx_tasks.replay import Replay
    from sama_model.adapters.lmms_eval_model import SAMA

    monkeypatch.setattr(sys, "argv", ["lmms-eval"])
    sama = SAMA(trace_dir=str(tmp_path / "traces"), cache_dir="none", **D.DOUBLE_ARGS)
    for name, call in (("sama", sama.generate_until_multi_round),
                       ("mvx_hf_chat", lambda r: HFChat.generate_until_multi_round(None, r)),
                       ("mvx_replay", lambda r: Replay.generate_until_multi_round(None, r))):
        with pytest.raises(C.MultiRoundUnsupported, match=f"{name} answers one turn per question .* mmsi_multiturn"):
            call(_multi_round_requests())
    assert issubclass(C.MultiRoundUnsupported, NotImplementedError)


def test_placement_from_the_launcher(monkeypatch):
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "ACCELERATE_USE_CPU"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(C, "_cuda_available", lambda: False)
    assert C.placement() == C.Placement(0, 1, 0, "cpu")
    assert C.placement("cpu") == C.Placement(0, 1, 0, "cpu")
    monkeypatch.setattr(C, "_cuda_available", lambda: True)
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert C.placement().device == "cuda:1" and C.placement("cuda").device == "cuda:1"
    assert C.placement("cuda:0").device == "cuda:0"  # an explicit device in one process is kept
    # several processes: the accelerator's device wins (lmms-eval gathers tensors there)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    import accelerate

    monkeypatch.setattr(accelerate, "PartialState", lambda cpu=False: SimpleNamespace(
        process_index=1, num_processes=2, local_process_index=1, device="cuda:1"))
    assert C.placement("cpu") == C.Placement(1, 2, 1, "cuda:1")

    def no_state(cpu=False):
        raise RuntimeError("no process group")

    monkeypatch.setattr(accelerate, "PartialState", no_state)  # read from the environment instead
    assert C.placement() == C.Placement(1, 2, 1, "cuda:1")
    monkeypatch.setenv("ACCELERATE_USE_CPU", "true")  # accelerate launch --cpu
    assert C.placement() == C.Placement(1, 2, 1, "cpu")


def test_sama_takes_rank_and_device_from_the_environment(tmp_path, monkeypatch):
    """lmms-eval 0.6.1 / 0.7.2 never set _rank/_world_size, and 0.7.3 only when world size > 1."""
    import test_sama_doubles as D

    from sama_model.adapters.lmms_eval_model import SAMA

    monkeypatch.setattr(sys, "argv", ["lmms-eval"])
    monkeypatch.setattr(C, "_cuda_available", lambda: False)
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        monkeypatch.delenv(key, raising=False)
    model = SAMA(trace_dir=str(tmp_path / "t"), cache_dir="none", **D.DOUBLE_ARGS)
    assert (model.rank, model.world_size, model.device) == (0, 1, "cpu")
