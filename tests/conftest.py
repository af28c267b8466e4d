import os
import sys
from pathlib import Path

# tests import their small helpers (fixtures, harness_run, tiny_models) by module name
sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
