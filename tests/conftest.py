import os
import sys
from pathlib import Path

# tests import their small helpers (fixtures, harness_run, tiny_models) by module name
sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# answer notes (mvx_tasks/answer_notes.py) of this test session, never the user's ~/.cache
if "MVX_ANSWER_NOTES" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["MVX_ANSWER_NOTES"] = tempfile.mkdtemp(prefix="mvx-answer-notes-")
    atexit.register(shutil.rmtree, os.environ["MVX_ANSWER_NOTES"], True)
