"""Paper A (signal-subspace recovery): the SymPy derivations, public names re-exported."""
from attnverify.theory.signal.recovery import *  # noqa: F401,F403
