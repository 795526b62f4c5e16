# Every target sets up .venv first: a fresh clone needs nothing but python3 and make.
# TORCH picks the torch under test (default 2.13.0, a CPU build; other versions from PyPI are
# CUDA builds of several GB: ask for them on purpose). TORCH_INDEX adds a wheel index, e.g.
# https://download.pytorch.org/whl/cpu for CPU builds elsewhere.
TORCH ?= 2.13.0
TORCH_INDEX ?=
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-torch-$(TORCH)
PIP_INDEX := $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))

# The version matrix (outside CI's default path: every version but 2.13.0 is a download of GBs).
# VERSIONS picks releases (default: all 17, 1.13.1 ... 2.15.0); CASES re-runs only those cases
# and merges them into the existing reports; CASES=stale picks, per version, the cases whose
# source changed since their record (or that have none). MATRIX_FLAGS=--keep keeps each version's venv.
UV_VERSION := 0.9.30
VERSIONS ?=
CASES ?=
UV := $(VENV)/bin/uv

.PHONY: integrations-check venv run test install-check bench clean matrix matrix-check docs docs-check serve-docs upgrade-scan watch-versions fix-versions

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	rm -f $(VENV)/.installed-torch-*
	$(PY) -m pip install --quiet $(PIP_INDEX) "torch==$(TORCH)"
	echo "torch==$(TORCH)" > $(VENV)/torch-constraint.txt
	$(PYTHON) harness/run/numpy_rule.py $(TORCH) >> $(VENV)/torch-constraint.txt  # numpy<2 before 2.3: one rule with the matrix
	$(PY) -m pip install --quiet $(PIP_INDEX) -c $(VENV)/torch-constraint.txt -e ".[test,docs,integrations]"
	touch $@

run: venv
	$(PY) -m torch_pitfalls run --json build/report.json

# The corpus and the harness's own tests. Two groups of tests have targets of their own, which
# .ci/run calls after this one: the docs site's (tests/docs: `make docs-check`, on the whole site) and
# the installed wheel's (tests/project/test_install.py: `make install-check`). A plain
# `pytest cases/ tests/` runs all of them, the site's on a sample of the corpus.
# One torch thread per process: the suite runs its whole-corpus runs beside the in-process items
# (tests/background.py), and two processes each spinning two OpenMP threads on two cores wait on
# each other (a case's backward pass measured 50x slower so). The processes share the cores instead.
test: venv
	OMP_NUM_THREADS=1 $(PY) -m pytest cases/ tests/ --ignore=tests/docs --ignore=tests/project/test_install.py \
		--ignore=tests/watch/test_integrations.py

# The watcher's Lightning and Hugging Face Trainer callbacks with the real libraries (the
# `integrations` extra, which make venv installs): a missing library is a failure here, not a skip.
integrations-check: venv
	$(PY) -c "import lightning, transformers, accelerate"
	$(PY) -m pytest tests/watch/test_integrations.py

# The wheel built, installed in a fresh venv beside this torch, and used from an empty directory.
install-check: venv
	$(PY) -m pytest tests/project/test_install.py

# Broken/fixed pairs side by side, and the harness's own cost; the ratios land under the key
# "pitfalls" of build/bench.json (benchmarks/summary.py) and in the terminal. -rs: why CUDA skipped.
bench: venv
	mkdir -p build
	$(PY) -m pytest benchmarks/ --benchmark-only --benchmark-json build/bench.json -rs

$(UV): $(STAMP)
	$(PY) -m pip install --quiet "uv==$(UV_VERSION)"

matrix: venv $(UV)
	$(PY) -m torch_pitfalls.matrix.build --uv $(UV) --watch-proofs --fix-proofs $(if $(VERSIONS),--versions "$(VERSIONS)") \
		$(if $(filter stale,$(CASES)),--stale,$(if $(CASES),--cases "$(CASES)")) $(if $(TORCH_INDEX),--index $(TORCH_INDEX)) $(MATRIX_FLAGS)
	$(PY) -m torch_pitfalls matrix

# What changed in torch's own files from release to release (the leads of cases/upgrade/): each
# release of VERSIONS (default: the matrix's) is downloaded alone, without dependencies (about
# 1 GB), scanned and deleted; scans stay in build/surface/ and their consecutive diffs are printed.
upgrade-scan: venv $(UV)
	$(PY) -m torch_pitfalls.surface fetch --uv $(UV) $(VERSIONS)
	$(PY) -m torch_pitfalls.surface diff build/surface

# Only the watcher's proofs, with every torch of the matrix (reports/watch-proofs.json); `make
# matrix` runs them too, beside the cases.
watch-versions: venv $(UV)
	$(PY) -m torch_pitfalls.matrix.build --uv $(UV) --watch-proofs --skip-cases $(if $(VERSIONS),--versions "$(VERSIONS)") $(MATRIX_FLAGS)

# Only the linter's fix proofs, with every torch of the matrix (reports/lint-fix-proofs.json: a fix
# proven on every release where its rule applies is applied by `pitfalls lint --fix`).
fix-versions: venv $(UV)
	$(PY) -m torch_pitfalls.matrix.build --uv $(UV) --fix-proofs --skip-cases $(if $(VERSIONS),--versions "$(VERSIONS)") $(MATRIX_FLAGS)

matrix-check: venv
	$(PY) -m torch_pitfalls matrix --check

# The docs site, offline, into build/site/ (English) and build/site/zh/ (Chinese). Every case's
# cells run once (shared by two processes), then Sphinx renders both editions from scratch, side
# by side in two processes; the Chinese catalogues are docs/locale/ (python -m docs.site.i18n update,
# docs/locale/TRANSLATING.md). A case page is kept in build/site-cache/ and reused while its case,
# the harness and generator code, the reports and the machine are unchanged (docs.site.page_cache:
# an edited case runs again, alone); FRESH=1 runs every case. `make docs-check` then runs the site's
# tests on it (tests/docs with PITFALLS_SITE): every case page, both editions, links and outputs of
# the whole corpus (`make test` checks the site of a sample); .ci/run calls it.
DOCS_PORT ?= 8000
FRESH ?=
# One torch thread per process here too: two processes run the cases, and the zh build runs
# beside the English one.
docs: venv
	OMP_NUM_THREADS=1 $(PY) -m docs.site.build --out build/site $(if $(FRESH),--no-cache)

docs-check: docs
	PITFALLS_SITE=build/site $(PY) -m pytest tests/docs -p no:randomly

serve-docs: docs
	$(PY) -m http.server --bind 127.0.0.1 --directory build/site $(DOCS_PORT)

clean:
	rm -rf $(VENV) build
