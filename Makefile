# The two commands of the README:
#   make book   set up a fresh machine and build the book into _build/html
#   make test   set up a fresh machine, build the book if needed, run the full test suite
# and, for contributors, make test-fast (no notebooks, no browser) and make test-avx2.
PY := .venv/bin/python

.PHONY: setup book test test-fast test-avx2 lint clean

setup:
	bash scripts/setup.sh

book: setup
	bash scripts/build_book.sh

test: setup
	@[ -f _build/html/index.html ] || bash scripts/build_book.sh
	$(PY) -m ruff check bparallel tests benchmarks
	$(PY) -m pytest -q --durations=15

# The fast tier: every test but the notebook regressions and the browser tests (marked
# `slow`); no book build needed. A few minutes on 2 cores.
test-fast: setup
	$(PY) -m pytest -q -m "not slow"

# The fast tier again with numpy, OpenBLAS and torch held to AVX2 kernels: on an AVX-512
# machine this checks that no test depends on the CPU's vector width (CI runs it).
test-avx2: setup
	NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" OPENBLAS_CORETYPE=Haswell \
	ATEN_CPU_CAPABILITY=avx2 $(PY) -m pytest -q -m "not slow"

lint: setup
	$(PY) -m ruff check bparallel tests benchmarks

clean:
	rm -rf _build
