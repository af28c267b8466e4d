"""The SAMA loop: plan -> act (a step's tool calls in parallel) -> verify -> remember -> decide.

At most ``max_iterations`` planner turns may call tools; at the cap the planner is asked for a
forced final answer from the evidence. The output always states exactly one option letter
("Answer: B", checked with :func:`mvx_tasks.answers.extract_choice`): when the planner gives
none, the task's scripted decision on the collected evidence answers, and as a last resort the
first option (a stated rule: an abstention that still names a letter). The final step records
which of these answered (``planner``, ``planner-forced``, ``evidence-fallback``,
``first-option-rule``), or ``rule`` where a solver's stated rule named the letter because the
evidence did not separate it from another (a tie's first listed option, a default;
:mod:`sama_model.skills.rules`), with the rule's reason; the harness reports the counts
(:mod:`mvx_tasks.answer_sources`). A
raising tool becomes an error entry in the evidence; an unreachable planner fails only this
question, with the reason in its trace.
"""
from __future__ import annotations

import itertools
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from mvx_tasks.answers import extract_choice

from .actions import FinalAnswer, ToolCall
from .atomic import OutputWriteError
from .cache import ToolCache
from .memory import EvidenceMemory
from .budget import RunBudget
from .planners import AgentState, Planner, PlannerTurn, PlannerUnavailable, QuestionContext, create_planner
from .pricing import PriceTable
from .profiles import AgentConfig
from .question import AgentQuestion
from .skills.context import PolicyContext
from .skills.meta_planner.policy import identify_task, option_video_map, select_policy
from .skills.multi_video_comparison.common import marked_fragile
from .skills.rules import rule_of
from .tools.base import Tool, ToolResult
from .tools.toolkit import build_tools
from .trace import ConflictStep, ErrorStep, FinalStep, MemoryStep, PlannerStep, QuestionTrace, ToolStep
from .verification import Verifier
from .question_videos import QuestionVideos

MAX_PARALLEL_TOOLS = 8


@dataclass
class AgentResult:
    question_id: str
    output: str  # "Answer: X", or "" when the question failed
    letter: str | None
    status: str  # "finished" | "failed"
    failure: str | None
    trace: QuestionTrace | None = None
    resumed: bool = False
    #: where the answer came from (see :data:`mvx_tasks.answer_sources.SOURCES`); None when failed
    source: str | None = None


_ANSWER_PREFIX = re.compile(r"^\s*(final\s+)?answer\s*[:：]\s*", re.I)


def follow_instruction(text: str, instruction: str) -> str:
    """Shape a free-text answer as the task asks: one word, or one number, when it says so."""
    ins = instruction.lower()
    if re.search(r"\b(a |one |single )?(number|integer|digit)\b", ins):
        m = re.search(r"-?\d+(?:\.\d+)?", text)
        return m.group(0) if m else text
    if re.search(r"\b(single|one) word\b", ins):
        m = re.search(r"[^\W\d_][\w'-]*", text)
        return m.group(0) if m else text
    return text


class QuestionError(ValueError):
    """A request that cannot be answered as given (no video at all, say): that question fails alone."""


class _Run:
    """State of one question's run (tools, memory, trace, call numbering)."""

    def __init__(self, agent: "SamaAgent", question: AgentQuestion, trace: QuestionTrace,
                 trace_path: Path | None) -> None:
        self.agent, self.cfg, self.question, self.trace, self.trace_path = agent, agent.config, question, trace, trace_path
        self.videos = QuestionVideos(question)
        self.tools: dict[str, Tool] = build_tools(self.videos, self.cfg.active_backends(), agent.cache)
        self.memory = EvidenceMemory(self.videos.labels, aggregate=self.cfg.aggregation)
        self.task, self.task_source = identify_task(question, use_hint=self.cfg.task_hint)
        self.ctx = QuestionContext(question, self.task, self.task_source,
                                   option_video_map(question.options, self.videos.labels),
                                   [t.spec() for t in self.tools.values()], self.cfg.skills, self.memory,
                                   self.duration)
        self.verifier = Verifier(self.duration, rounds=self.cfg.reread_rounds) if self.cfg.conflict else None
        self._ids = itertools.count(1)
        self._id_lock = threading.Lock()

    def duration(self, label: str) -> float:
        return float(self.videos.clip(label).duration)

    def save(self) -> None:
        if self.trace_path is not None:
            self.trace.save(self.trace_path)

    # -- act -----------------------------------------------------------------------------------
    def _run_one(self, call: ToolCall) -> ToolResult:
        tool = self.tools.get(call.tool)
        if tool is None:
            return ToolResult(call.tool, dict(call.args), error=f"tool {call.tool!r} is switched off or unknown; "
                                                                f"available: {sorted(self.tools)}")
        return tool(**dict(call.args))

    def execute(self, calls: list[ToolCall], iteration: int, reread_of: str | None = None) -> list[ToolResult]:
        """Run one step's calls in parallel threads; results come back in call order."""
        with self._id_lock:
            ids = [f"t{next(self._ids)}" for _ in calls]
        if len(calls) == 1:
            results = [self._run_one(calls[0])]
        else:
            with ThreadPoolExecutor(max_workers=min(len(calls), MAX_PARALLEL_TOOLS)) as pool:
                results = list(pool.map(self._run_one, calls))
        for cid, r in zip(ids, results):
            r.call_id = cid
            self.trace.add(ToolStep(iteration, cid, r.tool, r.args, r.backend, r.data, r.text, r.error,
                                    round(r.elapsed, 4), r.cached, reread_of))
        return results

    # -- verify --------------------------------------------------------------------------------
    def verify(self, results: list[ToolResult], iteration: int) -> tuple[list[ToolResult], list[str]]:
        """Conflicts raised by this step, resolved by re-reading; returns (re-read results, notes)."""
        if self.verifier is None:
            return [], []
        rereads: list[ToolResult] = []
        notes = []

        def run(calls: list[ToolCall], cid: str) -> list[ToolResult]:
            out = self.execute(calls, iteration, reread_of=cid)
            rereads.extend(out)
            return out

        for conflict in self.verifier.detect([r for r in results if r.ok], iteration):
            self.verifier.resolve(conflict, run, set(self.tools))
            self.trace.add(ConflictStep(iteration, conflict.id, conflict.video, conflict.attribute, conflict.subject,
                                        conflict.initial,
                                        conflict.window(), conflict.rounds, conflict.status, conflict.resolution,
                                        conflict.rule))
            self.memory.add_fact(conflict.video, conflict.attribute, conflict.subject, conflict.resolution,
                                 conflict.status, conflict.detail())
            notes.append(f"conflict {conflict.id} on {conflict.video} {conflict.attribute}({conflict.subject}): "
                         f"{conflict.detail()} -> {conflict.status}, using {conflict.resolution}")
        return rereads, notes

    # -- decide --------------------------------------------------------------------------------
    def record_turn(self, turn: PlannerTurn, iteration: int, elapsed: float, forced: bool) -> None:
        self.trace.add(PlannerStep(iteration, self.agent.planner.name, "memory" if self.cfg.aggregation else "raw",
                                   turn.messages, turn.output, [c.to_dict() for c in turn.calls],
                                   turn.final.text if turn.final else None, turn.usage, turn.invalid,
                                   round(elapsed, 4), forced, turn.note, list(turn.events)))

    def fallback(self) -> tuple[str, str, str]:
        """(answer, reason, source): the task's scripted decision on the collected evidence
        ("evidence-fallback"; "rule" where its stated rule named the letter); else the first option
        ("first-option-rule", an abstention).
        Open-ended: the scripted answer from the evidence (the video reader's), else empty."""
        policy = PolicyContext(self.question, self.task, self.task_source, self.memory, set(self.tools),
                               self.duration, self.ctx.option_map)
        name, _, decide = select_policy(self.task, self.cfg.skills)
        letter, reason = decide(policy)
        source = "rule" if letter and rule_of(reason) else "evidence-fallback"
        if self.question.open_ended:
            return (letter or ""), f"{name}: {reason}", source
        if letter and letter in self.question.options:
            return letter, f"{name}: {reason}", source
        first = next(iter(self.question.options))
        return first, f"no evidence decided ({reason}); rule: first option", "first-option-rule"

    def _open_answer(self, final: FinalAnswer | None, forced: bool) -> tuple[str, str | None]:
        """Free text for an open-ended question: the planner's answer, else the evidence's."""
        text = _ANSWER_PREFIX.sub("", final.text).strip() if final and final.text else ""
        if text:
            source, reason = ("planner-forced" if forced else "planner"), final.reason
        else:
            text, reason, source = self.fallback()
        text = follow_instruction(text, self.question.instruction)
        self.trace.add(FinalStep(text, None, reason, forced, source, marked_fragile(reason)))
        return text, None

    def run(self) -> tuple[str, str]:
        session = self.agent.planner.start(self.ctx)
        cap = self.cfg.max_iterations
        notes: list[str] = []
        final, forced = None, False
        state = AgentState(0, cap, self.memory, notes)
        for iteration in range(1, cap + 1):
            state = AgentState(iteration, cap, self.memory, notes)
            t0 = time.perf_counter()
            turn = session.next_turn(state)
            self.record_turn(turn, iteration, time.perf_counter() - t0, False)
            if turn.final is not None:
                final = turn.final
                break
            if not turn.calls:
                notes = [f"iteration {iteration}: the planner's reply was invalid ({turn.note}); "
                         f"call a tool or answer"]
                continue
            results = self.execute(turn.calls, iteration)
            session.observe(turn, results)
            rereads, notes = self.verify(results, iteration)
            for r in results:
                self.memory.add(r, iteration)
            for r in rereads:
                self.memory.add(r, iteration, reread_of="verification")
            self.trace.add(MemoryStep(iteration, self.memory.snapshot() if self.cfg.aggregation
                                      else {"raw_entries": len(self.memory.raw)}))
            self.save()
        else:
            state = AgentState(cap, cap, self.memory, notes)
            t0 = time.perf_counter()
            turn = session.final_turn(state)
            self.record_turn(turn, cap, time.perf_counter() - t0, True)
            final, forced = turn.final, True
        if self.question.open_ended:
            return self._open_answer(final, forced)
        letter = extract_choice(final.text, self.question.options) if final else None
        if letter is not None:
            source, reason = ("planner-forced" if forced else "planner"), (final.reason if final else "")
            if final is not None and final.rule:  # the solver's stated rule named it, not the evidence
                source = "rule"
        else:
            letter, reason, source = self.fallback()
        output = f"Answer: {letter}"
        self.trace.add(FinalStep(output, letter, reason, forced, source, marked_fragile(reason)))
        return output, letter


def _all_tools_failed(trace: QuestionTrace) -> str | None:
    """The reason when a question had tool calls and every one of them failed (e.g. missing weights)."""
    calls = [s for s in trace.steps if isinstance(s, ToolStep)]
    if calls and all(s.error for s in calls):
        return f"every tool call failed; first error: {calls[0].tool}: {calls[0].error}"
    return None


class SamaAgent:
    """Answers :class:`AgentQuestion` objects; one instance is shared by all worker threads."""

    def __init__(self, config: AgentConfig, planner: Planner | None = None) -> None:
        self.config = config
        self.planner = planner or create_planner(config.planner, **config.planner_options)
        self.cache = ToolCache(config.cache_dir) if config.cache_dir else None
        self.fingerprint = config.fingerprint()
        self.prices = PriceTable.load(config.prices)  # traces carry dollars
        self.budget = RunBudget(config.max_cost_usd, config.max_tokens_run)  # the run's spending, all workers

    def describe(self) -> dict:
        return {**self.config.to_dict(), "planner_config": self.planner.describe()}

    def refuse(self, question: AgentQuestion, failure: str, trace_path: str | Path | None = None,
               resume_key: dict[str, str] | None = None) -> AgentResult:
        """Record a question as failed without starting it (the run's budget is spent): a failed trace,
        so a rerun with a higher budget answers it."""
        trace = QuestionTrace(question.public_dict(), self.describe(), self.fingerprint, resume_key)
        trace.status, trace.failure, trace.output = "failed", failure, ""
        trace.add(ErrorStep(0, failure))
        if trace_path is not None:
            trace.save(trace_path)
        return AgentResult(question.id, "", None, "failed", failure, trace)

    def answer(self, question: AgentQuestion, trace_path: str | Path | None = None,
               resume_key: dict[str, str] | None = None) -> AgentResult:
        """Answer one question; ``resume_key`` (from the runner) is stored so a rerun can trust the trace."""
        trace = QuestionTrace(question.public_dict(), self.describe(), self.fingerprint, resume_key)
        trace.prices = self.prices
        path = Path(trace_path) if trace_path else None
        t0 = time.perf_counter()
        output, letter, failure = "", None, None
        try:
            if not question.videos:
                raise QuestionError("the request holds no video or image item; SAMA answers questions about "
                                    "videos (check the task's doc_to_visual / doc_to_messages)")
            run = _Run(self, question, trace, path)
            output, letter = run.run()
            trace.status = "finished"
            failure = _all_tools_failed(trace)
            if failure:  # an answer without any evidence is a guess: report the cause instead
                output, letter = "", None
        except OutputWriteError:  # the run cannot keep its results: stop it, naming the path and the fix
            raise
        except PlannerUnavailable as exc:
            failure = f"planner unavailable: {exc}"
        except Exception as exc:  # a broken question must not stop the run
            failure = f"{type(exc).__name__}: {exc}"
        if failure:
            trace.status, trace.failure = "failed", failure
            trace.add(ErrorStep(0, failure))
        trace.output = output
        trace.elapsed = time.perf_counter() - t0
        if path is not None:
            trace.save(path)
        return AgentResult(question.id, output, letter, trace.status, failure, trace,
                           source=None if failure else trace.answer_source())
