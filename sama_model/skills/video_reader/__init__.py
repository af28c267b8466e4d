"""The video_reader skill: SKILL.md for LLM planners, policy.py for the scripted planner."""
