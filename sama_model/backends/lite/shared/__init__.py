"""What every lite tool shares: the per-process frame memo, query words, window sampling, order statistics."""
