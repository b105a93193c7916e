r"""Model files as papers: a softmax-attention model stated in a TOML file (docs/models.md) gets checks and mutants
as a built-in paper does, generated from the file.

>>> from attnverify.checks.engine import add_model
>>> paper = add_model("examples/models/two_signals.toml")     # doctest: +SKIP
>>> paper.check_ids()                                        # doctest: +SKIP
['two_signals.objective_vs_montecarlo', ...]

* :mod:`.paper`: :func:`add_model`, the :class:`ModelPaper` and its registration;
* the check templates, one per module (``objective``, ``finite_size``; a trained query only), each registered per
  model with ``check(...)(run)``;
* what the checks receive: ``_theory.ModelTheory`` (the derived side, over the engine's Derivation) and
  ``_numerics.ModelNumerics`` (the simulators, with the bridge ``_bridge`` from the file to the numeric model);
* ``_sizes``: the predicted remainder of the O(1/L) terms (which sizes a comparison can trust);
* ``_settings``: a file's ``[checks.<name>]`` tables applied to its checks; :func:`file_settings` says which values
  a check takes from its file;
* :mod:`.selftest`: the generic mutants.
"""
from attnverify.checks.engine._settings import file_settings
from attnverify.checks.engine.paper import ModelPaper, add_model

__all__ = ["ModelPaper", "add_model", "file_settings"]
