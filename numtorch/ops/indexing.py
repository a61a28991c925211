"""Indexing: __getitem__/__setitem__, gather/scatter, index_*, masked ops, take, put, one_hot."""

from __future__ import annotations
