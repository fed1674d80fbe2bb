# make run: open the explorer; make test: the whole suite, headless.
# On first use both create .venv and install the pinned environment.
# Both build the translations (assets/translations/*.qm) from the committed .ts sources.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test check lint bench selftest clean translations translations-update

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.lock
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $(STAMP)

# ---- translations: .ts (committed, edited in Qt Linguist) -> .qm (built, loaded by the app) -------
TS := $(wildcard assets/translations/*.ts)
QM := $(TS:.ts=.qm)

translations: $(QM)

assets/translations/%.qm: assets/translations/%.ts | $(STAMP)
	$(BIN)/pyside6-lrelease -silent $< -qm $@

# re-extract the strings of explorer/ (new ones arrive untranslated: the tests say which)
translations-update: $(STAMP)
	LUPDATE=$(BIN)/pyside6-lupdate sh packaging/update_translations.sh

# first: are the system libraries Qt's xcb plugin needs there? (else the apt-get/dnf line, exit 1)
run: $(STAMP) $(QM)
	$(BIN)/python -m explorer.platform_check
	$(BIN)/python main.py

# the whole suite across both cores; a test module runs whole in one worker (its module-scoped
# window and models are shared by its tests; modules never share a resource). A worker that
# crashes natively ends the run at once, failed: a replaced worker re-runs the crashed module,
# and pytest-xdist 3.8's per-file scheduler can then hang with both workers idle.
# --no-loadscope-reorder: the modules are handed out in collection order, the longest first
# (tests/conftest.py LONGEST_FIRST), not by their number of tests (a long module with few tests
# last kept one worker busy alone at the end).
PYTEST_PARALLEL := -n 2 --dist loadfile --no-loadscope-reorder --max-worker-restart=0

lint: $(STAMP)
	$(BIN)/python -m ruff check .
	$(BIN)/lint-imports

test: lint $(QM)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q $(PYTEST_PARALLEL)

# the edit loop: ruff, the import contracts and every test not marked slow
check: lint $(QM)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q $(PYTEST_PARALLEL) -m "not slow"

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python main.py bench

selftest: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python main.py selftest

clean:
	rm -rf $(VENV) build dist *.egg-info $(QM)

# --- installers (packaging/; see docs/teachers-guide.md and packaging/README.md) ---------------
# make bundle: PyInstaller one-folder bundle in dist/attention-explorer/ and, on Debian/Ubuntu,
#   dist/attention-explorer_<version>_<arch>.deb. make bundle-test: builds them if needed, runs
#   the bundle's selftest and the selftest of the .deb unpacked into a temporary root.
BUILD_STAMP := $(VENV)/.build-tools
BUNDLE_EXE := dist/attention-explorer/attention-explorer
BUNDLE_SRC := main.py pyproject.toml requirements.lock $(wildcard packaging/*.py packaging/*.spec packaging/requirements-build.txt) \
	$(shell find engine explorer assets packaging/linux packaging/licenses -type f ! -name '*.pyc' 2>/dev/null)

.PHONY: bundle bundle-test deb-install-test

$(BUILD_STAMP): $(STAMP) packaging/requirements-build.txt
	$(BIN)/python -m pip install -q -r packaging/requirements-build.txt
	touch $(BUILD_STAMP)

$(BUNDLE_EXE): $(BUILD_STAMP) $(BUNDLE_SRC) $(QM)
	$(BIN)/python packaging/build.py bundle

dist/.deb-stamp: $(BUNDLE_EXE) $(wildcard packaging/linux/*) docs/teachers-guide.md
	if command -v dpkg-deb >/dev/null; then $(BIN)/python packaging/build.py deb; fi
	touch dist/.deb-stamp

bundle: $(BUNDLE_EXE) dist/.deb-stamp
	$(BIN)/python packaging/build.py sizes

bundle-test: bundle
	QT_QPA_PLATFORM=offscreen $(BIN)/python packaging/build.py check --require-selftest
	if command -v dpkg-deb >/dev/null; then QT_QPA_PLATFORM=offscreen $(BIN)/python packaging/build.py deb-test --require-selftest; fi
	QT_QPA_PLATFORM=offscreen AE_BUNDLE_TEST=1 $(BIN)/python -m pytest -q -m bundle tests/test_packaging.py

# Root only: apt-get install the .deb for real, run /usr/bin/attention-explorer selftest, purge it.
deb-install-test: bundle
	QT_QPA_PLATFORM=offscreen $(BIN)/python packaging/build.py deb-install-test --require-selftest
