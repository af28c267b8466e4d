"""Offline backends: pixels, timestamps, subtitles and query text only."""
