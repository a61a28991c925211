"""Comparisons, logical ops, predicates and where."""

from __future__ import annotations
