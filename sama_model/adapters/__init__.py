"""Harness adapters: the only modules that import lmms-eval or VLMEvalKit."""
