"""SA-Bench dataset: load and validate `<papers>/<paper_id>/{paper.md, sau.json, config.yaml}`."""

from __future__ import annotations


class DatasetError(ValueError):
    """A dataset file that cannot be used; the message names the file and the entry."""
