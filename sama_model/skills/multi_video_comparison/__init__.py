"""The multi_video_comparison skill: SKILL.md for LLM planners, policy.py for the scripted planner."""
