# make run: open the explorer; make test: the whole suite, headless.
# On first use both create .venv and install the pinned environment.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench selftest clean

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.lock
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/python main.py

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m ruff check .
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python main.py bench

selftest: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python main.py selftest

clean:
	rm -rf $(VENV) build dist *.egg-info
