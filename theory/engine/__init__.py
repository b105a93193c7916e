r"""The model engine: a softmax-attention model stated as data (a TOML file), derived with SymPy.

>>> from attnverify.theory.engine import load_model, derive
>>> D = derive("examples/models/two_signals.toml")          # doctest: +SKIP
>>> D.quantities["J_limit"], D.symbols["rho_xi"]             # doctest: +SKIP

See docs/models.md for the file format, the quantities and the engine's limits.
"""
from attnverify.theory.engine.derive import Derivation, derive
from attnverify.theory.engine.equilibria import Equilibria, Equilibrium
from attnverify.theory.engine.expressions import ModelError
from attnverify.theory.engine.model_file import Component, Model, load_model
from attnverify.theory.engine.token_map import gaussian_token_map, gaussian_token_map_numeric

__all__ = ["Component", "Derivation", "Equilibria", "Equilibrium", "Model", "ModelError", "derive",
           "gaussian_token_map", "gaussian_token_map_numeric", "load_model"]
