"""The ``attnverify`` command line."""
from attnverify.cli.main import main

__all__ = ["main"]
