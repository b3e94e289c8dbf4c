# gmtool: two commands set everything up.
#   make demo   build .venv, install gmtool, index the bundled sample library, ask a question
#   make test   build .venv if missing, install gmtool with its test extras, run lint + the suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SAMPLE := gmtool/sample

.PHONY: demo test lint bench eval docs clean sample bytecode

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $(STAMP)

# Bytecode for gmtool's own modules: an editable install has none, and with PYTHONDONTWRITEBYTECODE set
# every gmtool process (each CLI run a test starts) would compile them from source again.
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q gmtool > /dev/null

demo: $(STAMP) bytecode
	$(BIN)/gmtool scan $(SAMPLE)
	$(BIN)/gmtool ls -L $(SAMPLE)
	$(BIN)/gmtool toc -L $(SAMPLE) bestiary --depth 2
	$(BIN)/gmtool ask -L $(SAMPLE) "a tanky spellcaster class" --limit 5
	$(BIN)/gmtool search -L $(SAMPLE) "stone gaze" --limit 5

lint: $(STAMP)
	$(BIN)/ruff check gmtool
	$(BIN)/mypy gmtool
	$(BIN)/lint-imports

# The suite runs on TEST_JOBS cores (pytest-xdist); session fixtures are still built once per run
# (tests/conftest.py: build_once). TEST_JOBS=0 runs it in one process.
TEST_JOBS ?= 2

test: $(STAMP) bytecode
	$(MAKE) --no-print-directory lint
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder

bench: $(STAMP)
	$(BIN)/python bench/search.py
	$(BIN)/python bench/ask.py
	$(BIN)/python bench/scan.py

# The transfer evaluation of issue #20: every development book and question set in one table (<= 15 min).
eval: $(STAMP) bytecode
	$(BIN)/python bench/eval.py

docs: $(STAMP)
	$(BIN)/python bench/gen_docs.py

sample: $(STAMP)
	$(BIN)/python tests/pdfgen.py --sample $(SAMPLE)

clean:
	rm -rf $(VENV) build dist *.egg-info $(SAMPLE)/.gmtool .pytest_cache .mypy_cache .ruff_cache
