"""Fitted parameters: the classifiers the lite tools load and the JSON files they are stored in (refitted by
``benchmarks/fit_*_classes.py``)."""
from pathlib import Path

#: the folder holding the fitted classifiers' JSON files
FITTED_DIR = Path(__file__).parent
