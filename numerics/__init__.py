"""Numeric side of attnverify: NumPy, SciPy and mpmath simulators (never SymPy, never ``theory``)."""
