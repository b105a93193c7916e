"""Paper A (signal-subspace recovery): the simulators."""
