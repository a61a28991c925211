"""Helpers for the op test database (no oracle imports here)."""
