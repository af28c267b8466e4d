"""The subtitle skill: SKILL.md for LLM planners, policy.py for the scripted planner."""
