"""Where things are, wherever the checkout is."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
ARTIFACTS = REPO / "test-artifacts"
CORPUS = TESTS / "corpus"
FIXTURES = TESTS / "fixtures"
