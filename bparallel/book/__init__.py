"""What the book's chapters need and nothing else does: results files, the regression
runner, plotting, the playgrounds, the shipped models, the published tables and the chapter
tables.

Imports the theory layer and :mod:`bparallel.transformer`; nothing imports it but the CLI.
"""
