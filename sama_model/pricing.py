"""Token counts -> dollars: a price table per model (per million tokens), overridable by YAML.

The paper reports cost as a result ($53 for 350 questions with the GPT-5.2 planner), so every
trace carries its question's tokens by source (the planner, each endpoint backend) and their price,
and runs add them up (:mod:`sama_model.budget`, ``mvx-bench summary``). Prices live in
``prices.yaml`` beside this file; a user's file (``prices=<file>`` or ``$SAMA_PRICES``) overrides
entries. Unknown models (self-served ones) cost 0 and are reported as unpriced rather than guessed.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .chat_api import USAGE_KEYS

PRICE_FILE = Path(__file__).with_name("prices.yaml")
PRICE_KEYS = ("input", "cached_input", "output")


class PriceError(ValueError):
    """A price file that cannot be used (the message names the file and the entry)."""


def _read(path: Path) -> dict[str, dict[str, float]]:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise PriceError(f"cannot read the price file {path}: {exc}") from None
    models = data.get("models", data) if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise PriceError(f"{path}: expected 'models: {{<model>: {{input: .., output: ..}}}}'")
    out: dict[str, dict[str, float]] = {}
    for name, entry in models.items():
        if name == "as_of":
            continue
        if not isinstance(entry, dict) or "input" not in entry or "output" not in entry:
            raise PriceError(f"{path}: {name}: give input and output prices (USD per million tokens)")
        try:
            out[str(name)] = {k: float(entry.get(k, entry["input"] if k == "cached_input" else 0.0))
                              for k in PRICE_KEYS}
        except (TypeError, ValueError):
            raise PriceError(f"{path}: {name}: prices must be numbers, got {entry}") from None
    return out


@dataclass
class PriceTable:
    """Prices per model; ``price(model)`` finds a model by exact name, without a provider prefix
    (``openai/gpt-5.2``), or by the longest listed prefix (``gpt-5.2-2025-12-11`` -> ``gpt-5.2``)."""

    models: dict[str, dict[str, float]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, override: str | os.PathLike | None = None) -> "PriceTable":
        """The shipped table, then ``$SAMA_PRICES``, then ``override`` (later files win per model)."""
        table = cls(_read(PRICE_FILE), [str(PRICE_FILE)])
        for extra in (os.environ.get("SAMA_PRICES"), override):
            if extra:
                table.models.update(_read(Path(extra)))
                table.sources.append(str(extra))
        return table

    def price(self, model: str | None) -> dict[str, float] | None:
        if not model:
            return None
        name = str(model)
        for candidate in (name, name.rsplit("/", 1)[-1]):
            if candidate in self.models:
                return self.models[candidate]
        tail = name.rsplit("/", 1)[-1]
        best = max((k for k in self.models if tail.startswith(k)), key=len, default=None)
        return self.models[best] if best else None

    def dollars(self, model: str | None, usage: dict[str, int]) -> float | None:
        """Cost of ``usage`` (prompt tokens include cached ones), or None for an unpriced model."""
        p = self.price(model)
        if p is None:
            return None
        prompt, cached = int(usage.get("prompt_tokens", 0)), int(usage.get("cached_tokens", 0))
        fresh = max(0, prompt - cached)
        return (fresh * p["input"] + min(cached, prompt) * p["cached_input"]
                + int(usage.get("completion_tokens", 0)) * p["output"]) / 1e6

    def cost(self, by_source: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """``{"cost_usd", "cost_by_source", "unpriced"}`` for per-source usage (each entry names its
        ``model``); unpriced models add 0 and are listed."""
        total, per, unpriced = 0.0, {}, []
        for source, entry in by_source.items():
            d = self.dollars(entry.get("model"), entry)
            if d is None:
                if any(int(entry.get(k, 0)) for k in USAGE_KEYS):
                    unpriced.append(str(entry.get("model")))
                d = 0.0
            per[source] = round(d, 6)
            total += d
        return {"cost_usd": round(total, 6), "cost_by_source": per, "unpriced": sorted(set(unpriced))}


def usage_by_source(trace: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Token counts of one question (a trace as saved) by source: ``planner`` (every planner turn)
    and ``<tool>/<backend>`` for each endpoint backend that reported usage; tool results served
    from the cache cost nothing and are left out. Each entry names its ``model`` and counts its
    ``calls`` (requests answered)."""
    out: dict[str, dict[str, Any]] = {}
    planner_model = ((trace.get("config") or {}).get("planner_config") or {}).get("model")

    def add(source: str, model: Any, usage: dict[str, Any], requests: int = 1) -> None:
        entry = out.setdefault(source, {"model": model, **{k: 0 for k in USAGE_KEYS}, "calls": 0})
        for k in USAGE_KEYS:
            entry[k] += int(usage.get(k, 0) or 0)
        entry["calls"] += requests

    for step in trace.get("steps") or []:
        get = step.get if isinstance(step, dict) else lambda k, s=step: getattr(s, k, None)  # saved or live steps
        if get("kind") == "planner" and get("usage"):
            output = get("output")  # one entry per response (a re-ask adds one)
            add("planner", planner_model, get("usage"), len(output) if isinstance(output, list) and output else 1)
        elif get("kind") == "tool" and not get("cached"):
            data = get("data") or {}
            if isinstance(data, dict) and isinstance(data.get("usage"), dict):
                add(f"{get('tool')}/{get('backend')}", data.get("model"), data["usage"])
    return out


def question_cost(trace: dict[str, Any], table: PriceTable) -> dict[str, Any]:
    """What a trace's ``totals`` say about money: tokens by source, all tokens, dollars."""
    by_source = usage_by_source(trace)
    tokens = sum(int(e.get("prompt_tokens", 0)) + int(e.get("completion_tokens", 0)) for e in by_source.values())
    return {"usage_by_source": by_source, "tokens": tokens, **table.cost(by_source)}
