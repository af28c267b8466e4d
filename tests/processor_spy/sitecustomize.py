"""Test-only: record what the Qwen2.5-VL processor receives, in a subprocess run of lmms-eval.

Put this folder on PYTHONPATH and set MVX_SPY_LOG; every processor call appends one JSON line
with the number of videos and images it was given.
"""
import json
import os

_log = os.environ.get("MVX_SPY_LOG")
if _log:
    try:
        from transformers import Qwen2_5_VLProcessor

        _orig = Qwen2_5_VLProcessor.__call__

        def _spy(self, *args, **kwargs):
            videos = kwargs.get("videos")
            images = kwargs.get("images")
            videos = [] if videos is None else (list(videos) if isinstance(videos, (list, tuple)) else [videos])
            images = [] if images is None else (list(images) if isinstance(images, (list, tuple)) else [images])
            with open(_log, "a") as fh:
                fh.write(json.dumps({"videos": len(videos), "images": len(images)}) + "\n")
            return _orig(self, *args, **kwargs)

        Qwen2_5_VLProcessor.__call__ = _spy
    except Exception as exc:  # the spy must never break the run it observes
        with open(_log, "a") as fh:
            fh.write(json.dumps({"spy_error": repr(exc)}) + "\n")
