"""Tool backends: ``lite`` (offline classical vision) and ``models`` (the paper's models)."""
