"""Symbolic side of attnverify: SymPy derivations of the papers' closed forms (SymPy only)."""
