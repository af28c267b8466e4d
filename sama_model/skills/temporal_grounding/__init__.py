"""The temporal_grounding skill: SKILL.md for LLM planners, policy.py for the scripted planner."""
