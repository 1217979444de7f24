# The two commands of the README:
#   make book   set up a fresh machine and build the book into _build/html
#   make test   set up a fresh machine, build the book if needed, run the full test suite
PY := .venv/bin/python

.PHONY: setup book test lint clean

setup:
	bash scripts/setup.sh

book: setup
	bash scripts/build_book.sh

test: setup
	@[ -f _build/html/index.html ] || bash scripts/build_book.sh
	$(PY) -m ruff check bparallel tests benchmarks
	$(PY) -m pytest -q

lint: setup
	$(PY) -m ruff check bparallel tests benchmarks

clean:
	rm -rf _build
