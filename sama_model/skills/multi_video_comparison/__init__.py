"""The multi_video_comparison skill: SKILL.md for LLM planners; one scripted solver per task
(cnt, am, art, rid, mvr, vs, spr, seq) registered in policy.py, shared helpers in common.py."""
