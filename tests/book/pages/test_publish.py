"""Publishing: the GitHub Actions workflow is valid and does what the README says."""

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"


def test_workflow_is_valid_against_the_github_schema():
    # check-jsonschema ships GitHub's workflow schema: this runs offline.
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
         str(WORKFLOW)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_workflow_runs_the_readme_commands_and_deploys_pages():
    flow = yaml.safe_load(WORKFLOW.read_text())
    build = flow["jobs"]["build"]["steps"]
    runs = [s.get("run", "") for s in build]
    readme = (ROOT / "README.md").read_text()
    for command in ("make book", "make test"):
        assert command in runs and command in readme
    assert any(".nojekyll" in r for r in runs)
    assert any(s.get("uses", "").startswith("actions/upload-pages-artifact") and
               s["with"]["path"] == "_build/html" for s in build)
    deploy = flow["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert any(s.get("uses", "").startswith("actions/deploy-pages") for s in deploy["steps"])


def test_citation_file_and_the_books_cite_box_agree():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["preferred-citation"]["year"] == 2025
    assert "arXiv:2507.02944" in str(cff["preferred-citation"]["identifiers"])
    intro = (ROOT / "book" / "intro.md").read_text()
    assert "## Cite this" in intro and "2507.02944" in intro
    # the book's own entry is written by {book-bibtex}, with the version CITATION.cff cites
    from bparallel.book.render.sphinxext import book_bibtex

    assert "```{book-bibtex}" in intro and "CITATION.cff" in intro
    assert f"version = {{{cff['version']}}}" in book_bibtex()
