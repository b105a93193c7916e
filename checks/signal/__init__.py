"""Checks of Paper A (signal-subspace recovery by a learned softmax query)."""
