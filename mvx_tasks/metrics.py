"""Per-question records and the paper's aggregation.

Accuracy is reported in percent, like Table 1. The overall figure is question-weighted
(total correct / total answered), not the mean of task accuracies; the level figures are
question-weighted over their tasks. Records are self-describing so a samples log can be
re-aggregated without the dataset.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Iterable, Mapping

from .answers import extract_choice
from .registry import LEVELS, all_levels, get_task


@dataclass
class QuestionRecord:
    """What one question contributed: enough to audit and re-score it."""

    id: str
    task: str
    raw_output: str
    parsed: str | None
    answer: str
    correct: bool
    unparsed: bool
    failed: str | None = None  # reason the question's videos could not be shown
    agent_failed: str | None = None  # why the model (an agent such as SAMA) reported it could not answer
    chance: float | None = None  # uniform guessing's expected accuracy on this question: 1 / its options

    def to_dict(self) -> dict:
        return asdict(self)


def question_chance(options: Mapping[str, str]) -> float:
    """Uniform guessing's expected accuracy on one question (1 / its options): the one place chance is
    computed, so a benchmark that mixes Yes/No with four options (CVBench) or offers 2-11 (MVU-Eval)
    shows the chance of the questions actually asked."""
    return 1.0 / len(options) if options else 0.0


def score_output(sample_id: str, task: str, output: str | None, options: Mapping[str, str], answer: str,
                 failed: str | None = None, agent_failed: str | None = None) -> QuestionRecord:
    """Parse a model's output and score it against the answer letter.

    A question whose videos could not be shown (``failed``) is scored wrong whatever the output. A
    question the model reported it could not answer (``agent_failed``, see :mod:`.answer_notes`) is
    scored wrong and counted as a failure, not as unparsed: ``unparsed`` means the model answered
    with an output that named no option.
    """
    text = "" if output is None else str(output)
    parsed = None if agent_failed is not None else extract_choice(text, dict(options))
    correct = parsed == answer and failed is None
    return QuestionRecord(id=str(sample_id), task=task, raw_output=text, parsed=parsed, answer=answer,
                          correct=bool(correct), unparsed=parsed is None and agent_failed is None, failed=failed,
                          agent_failed=agent_failed, chance=question_chance(options))


def _as_dict(r) -> dict:
    return r.to_dict() if isinstance(r, QuestionRecord) else dict(r)


def accuracy(records: Iterable) -> float:
    """Percent correct over the records (0.0 for none)."""
    rs = [_as_dict(r) for r in records]
    return 100.0 * sum(bool(r["correct"]) for r in rs) / len(rs) if rs else 0.0


def count_unparsed(records: Iterable) -> int:
    return sum(bool(_as_dict(r)["unparsed"]) for r in records)


@dataclass
class Summary:
    """Per-task, per-level and overall accuracy (percent) with counts."""

    per_task: dict[str, float]
    per_level: dict[str, float]
    overall: float
    n_per_task: dict[str, int]
    correct_per_task: dict[str, int]
    unparsed_per_task: dict[str, int]
    failed_per_task: dict[str, int]
    n_total: int
    agent_failed_per_task: dict[str, int] = field(default_factory=dict)
    #: chance (percent) per task and overall, question-weighted like accuracy: the mean of the questions'
    #: 1 / options (a record written before chance was recorded counts its task's registry chance)
    chance_per_task: dict[str, float] = field(default_factory=dict)
    chance_overall: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def summarize(records: Iterable) -> Summary:
    """Aggregate question records into the paper's figures."""
    by_task: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        d = _as_dict(r)
        by_task[d["task"]].append(d)
    per_task = {t: accuracy(rs) for t, rs in by_task.items()}
    n = {t: len(rs) for t, rs in by_task.items()}
    correct = {t: sum(bool(x["correct"]) for x in rs) for t, rs in by_task.items()}
    per_level: dict[str, float] = {}
    for level in all_levels():  # MVX-Bench's three, then each peer benchmark's
        tasks = [t for t in by_task if get_task(t).level == level]
        total = sum(n[t] for t in tasks)
        if total:
            per_level[level] = 100.0 * sum(correct[t] for t in tasks) / total
    n_total = sum(n.values())
    overall = 100.0 * sum(correct.values()) / n_total if n_total else 0.0
    chance_sum = {t: sum(record_chance(x) for x in rs) for t, rs in by_task.items()}
    return Summary(per_task=per_task, per_level=per_level, overall=overall, n_per_task=n,
                   correct_per_task=correct,
                   unparsed_per_task={t: count_unparsed(rs) for t, rs in by_task.items()},
                   failed_per_task={t: sum(x.get("failed") is not None for x in rs) for t, rs in by_task.items()},
                   n_total=n_total,
                   agent_failed_per_task={t: sum(x.get("agent_failed") is not None for x in rs)
                                          for t, rs in by_task.items()},
                   chance_per_task={t: 100.0 * chance_sum[t] / n[t] for t in by_task},
                   chance_overall=100.0 * sum(chance_sum.values()) / n_total if n_total else 0.0)


def record_chance(record: Mapping) -> float:
    """A record's chance (fraction): recorded per question, else its task's registry figure."""
    value = record.get("chance")
    return float(value) if value is not None else get_task(record["task"]).chance


def mean_of_tasks(per_task: Mapping[str, float]) -> float:
    """The unweighted mean over tasks (CrossVid's O.Avg), for accuracy and chance alike."""
    return sum(per_task.values()) / len(per_task) if per_task else 0.0


def weighted_overall(per_task_accuracy: Mapping[str, float], counts: Mapping[str, int] | None = None) -> float:
    """Question-weighted mean of per-task accuracies (percent), by default over the registry's counts.

    This is how Table 1's ``Avg`` column is computed from its per-task figures.
    """
    counts = counts or {t: get_task(t).n_questions for t in per_task_accuracy}
    total = sum(counts[t] for t in per_task_accuracy)
    if not total:
        raise ValueError("no questions to weight by")
    return sum(per_task_accuracy[t] * counts[t] for t in per_task_accuracy) / total
