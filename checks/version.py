"""The version of attnverify: the installed distribution's (pyproject.toml is its one source)."""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("attnverify")
except PackageNotFoundError:          # running from a source tree that is not installed
    VERSION = "unknown"
