"""The self-tests: mutants, check power, claim power, the false-alarm sweep and the paper profile."""
