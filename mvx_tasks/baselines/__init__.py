"""Baselines: the plugin's transformers chat adapter (``mvx_hf_chat``), tiny models of each baseline
architecture, and the route check (``mvx-bench routes``)."""
