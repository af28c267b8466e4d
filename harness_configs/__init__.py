"""The baseline and SAMA run configs, shipped as package data (``mvx_tasks.configs``; see setup.py)."""
