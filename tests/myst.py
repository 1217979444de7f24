"""The front matter of a MyST text notebook as the book's chapters open (jupytext, the
python3 kernel), for the tests that write a chapter of their own."""

MYST_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
