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

# The suite runs on $(WORKERS) pytest-xdist workers, each test file on one worker (a file's
# module fixtures are built once); WORKERS=0 runs it in this process, one test at a time.
WORKERS ?= 2
XDIST = -n $(WORKERS) --dist loadfile

test: setup
	@[ -f _build/html/index.html ] || bash scripts/phase.sh "book build" bash scripts/build_book.sh
	@bash scripts/phase.sh ruff $(PY) -m ruff check bparallel tests benchmarks
	@bash scripts/phase.sh pytest $(PY) -m pytest -q $(XDIST) --durations=15

# The fast tier: every test but the notebook regressions and the browser tests (marked
# `slow`); no book build needed. A few minutes on 2 cores.
test-fast: setup
	$(PY) -m pytest -q $(XDIST) -m "not slow"

# The fast tier of the tests that compute (NUMERIC: the theory, the Transformer floor, the
# science of the claims and Section 4 chapters, the book's own modules, the JavaScript
# parity checks, training and recording) and the quick regression of every chapter that
# measures trained models (08-13: the committed quick models, measured again with the
# metrics cache off) with numpy, OpenBLAS and torch held to AVX2 kernels: on an AVX-512
# machine this checks that no test and no regressed key depends on the CPU's vector width
# (CI runs it). The tests that only read text, pages and files (tests/book/pages, the
# renderers, the tools' plumbing, the layers, the wheel) compute nothing a vector width could
# move: `make test` ran them. On a machine whose widest kernels are AVX2 already, `make test`
# ran exactly these kernels: the repeat is skipped, and says so (FORCE_AVX2=1 runs it anyway).
AVX2 := NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" OPENBLAS_CORETYPE=Haswell \
	ATEN_CPU_CAPABILITY=avx2
# make test's suite runs the quick regression of MEASURING under AVX2 already on an AVX-512
# machine (tests/book/tools/quick_regression.py): AVX2_REGRESSION=0 skips it here (CI does).
AVX2_REGRESSION ?= 1
NUMERIC := tests/theory tests/transformer tests/book/claims tests/book/section4 \
	tests/book/test_*.py tests/book/render/test_js_parity.py \
	tests/book/render/test_tinytrain_parity.py tests/book/tools/test_sweep.py \
	tests/book/tools/test_record.py tests/book/tools/test_cli.py \
	tests/book/render/test_plotting.py
MEASURING := 08_proxies 09_amplification 10_section4_as_defined 11_across_seeds \
	12_graph_tasks 12a_graph_runs 12b_graph_tests 12c_graph_pilots 12d_graph_dropout \
	12e_graph_horse_race 12f_graph_heads 12g_graph_finite 12h_graph_controls \
	13_circuit 14_explorer
test-avx2: setup
	@cap=$$($(PY) -c "import torch; print(torch.backends.cpu.get_cpu_capability())"); \
	if [ "$${cap#AVX512}" = "$$cap" ] && [ -z "$(FORCE_AVX2)" ]; then \
		echo "[phase] AVX2 checks: skipped, this CPU's widest torch kernels are $$cap:" \
		     "make test already ran the suite and the regressions with them"; \
	else \
		bash scripts/phase.sh "fast tier, AVX2" env $(AVX2) $(PY) -m pytest -q $(XDIST) \
			-m "not slow" $(NUMERIC) && \
		if [ "$(AVX2_REGRESSION)" = 1 ]; then \
		bash scripts/phase.sh "quick regression of 08-14, AVX2" env $(AVX2) $(PY) -m bparallel \
			regress --profile quick --no-cache --output-dir regress-out/avx2 \
			--notebooks $(MEASURING); \
		else echo "[phase] quick regression of 08-14, AVX2: run by make test's suite" \
			"(tests/book/tools/quick_regression.py)"; fi; \
	fi

lint: setup
	$(PY) -m ruff check bparallel tests benchmarks

clean:
	rm -rf _build
