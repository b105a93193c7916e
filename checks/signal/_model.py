"""Paper A model options shared by its checks (THEORY.md, Paper A, "Model")."""
from __future__ import annotations

from checks.framework import Param

MODEL_PARAMS = (
    Param("sign", str, "fixed", "model option: 'fixed' signal sign, or 'symmetric' (one Rademacher sign per sequence)",
          choices=("fixed", "symmetric")),
    Param("theta", float, 0.25, "signal strength theta", low=0.0),
    Param("beta", float, 1.0, "inverse temperature beta", low=0.0, low_open=True),
    Param("sigma", float, 1.0, "noise standard deviation sigma", low=0.0, low_open=True),
    Param("R", int, 50, "number of informative tokens R", low=1),
    Param("L", int, 1050, "sequence length L", low=2),
    Param("d", int, 20, "token dimension d", low=2),
)


def validate_model(p: dict) -> None:
    """Cross-parameter constraints: 1 <= R < L (at least one nuisance token)."""
    if p["R"] > p["L"]:
        raise ValueError(f"R = {p['R']} exceeds L = {p['L']}: R counts informative tokens among L")
    if p["R"] == p["L"]:
        raise ValueError(f"R = L = {p['L']}: the model needs at least one nuisance token (R < L)")
