"""Model-based backends (the paper's configuration); each imports its library lazily."""
