"""Benchmarks of attnverify's numerical kernels (``attnverify bench``).

Timing code only; the tests run it at a tiny scale and never assert on a timing.
"""
