"""Dataset names for VLMEvalKit and where each one's data folder comes from (no VLMEvalKit import)."""
from __future__ import annotations

import re

#: Base dataset name -> (env var naming its canonical folder, benchmark shown on the leaderboard).
DATASET_ENV: dict[str, tuple[str, str]] = {
    "MVX_Bench": ("MVX_BENCH_DATA", "MVX-Bench"),
    "MVX_Synth": ("MVX_SYNTH_DATA", "MVX-Synth"),
}


def _add_peers() -> None:
    """The peer benchmarks' datasets (CVBench_MV, MVU_Eval_MV, CrossVid_MV), from their records; the
    ``_MV`` suffix keeps them apart from VLMEvalKit's own ``MVU-Eval`` and its image ``CVBench``."""
    from ..benchmarks import PEERS

    for bm in PEERS:
        DATASET_ENV[bm.vlmeval_name] = (bm.env, bm.name)


_add_peers()
FRAME_VARIANTS: tuple[int, ...] = (8, 16, 32)  # 32: MVU-Eval's authors' budget
DEFAULT_FRAMES = 8
RECORDS_SUFFIX = "_mvx_records.jsonl"  # per-question records written at evaluation
META_SUFFIX = "_mvx_meta.json"  # which model/dataset/benchmark those records belong to
_VARIANT = re.compile(r"^(?P<base>.+?)_(?P<n>\d+)frame$")


def dataset_names() -> list[str]:
    """Every registered name: the base names (8 frames) and their ``_<N>frame`` variants."""
    return [n for base in DATASET_ENV for n in (base, *(f"{base}_{k}frame" for k in FRAME_VARIANTS))]


def base_name(name: str) -> str:
    """``MVX_Bench_16frame`` -> ``MVX_Bench``; raises for a name this plugin does not own."""
    m = _VARIANT.match(name)
    base = m.group("base") if m else name
    if base not in DATASET_ENV:
        raise KeyError(f"{name!r} is not an MVX dataset; known: {', '.join(dataset_names())}")
    return base


def frames_of(name: str) -> int:
    """Frames per video a dataset name asks for."""
    base = base_name(name)
    m = _VARIANT.match(name)
    if m:
        return int(m.group("n"))
    from ..benchmarks import PEERS

    for bm in PEERS:  # a peer's base name runs at its paper's budget (CrossVid: 128 over its 4 videos)
        if bm.vlmeval_name == base:
            return bm.frames_per_video or max(1, (bm.total_frames or 32) // 4)
    return DEFAULT_FRAMES
