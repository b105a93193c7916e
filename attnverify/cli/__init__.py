"""The ``attnverify`` command line (attnverify.cli.command_line: the parser, list and the dispatch)."""
from attnverify.cli.command_line import main

__all__ = ["main"]
