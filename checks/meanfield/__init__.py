"""Checks of Paper B (mean-field transformers at low temperature)."""
