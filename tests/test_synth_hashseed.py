"""MVX-Synth must not depend on Python's per-process string hashing (set order): generation runs
in worker processes, each with its own hash seed."""
import os
import subprocess
import sys

import pytest

CODE = ("import json, sys; from mvx_tasks.synth import plan; "
        "print(json.dumps([s.to_dict() for s in plan(per_task=8, seed=0, difficulty=sys.argv[1])], sort_keys=True))")


@pytest.mark.parametrize("difficulty", ["easy", "default", "hard"])
def test_plan_is_identical_under_different_hash_seeds(difficulty):
    outs = []
    for hash_seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        outs.append(subprocess.run([sys.executable, "-c", CODE, difficulty], env=env, capture_output=True,
                                   text=True, check=True).stdout)
    assert outs[0] == outs[1] == outs[2]
