"""SAMA: the skill-augmented multi-video agent, wrapped as a harness model."""
__version__ = "0.1.0"
