"""Loads every check module and gives the catalogue in its fixed order."""
from __future__ import annotations

import importlib
import pkgutil

from attnverify.checks.framework import REGISTRY, Check

PACKAGES = ("attnverify.checks.signal", "attnverify.checks.meanfield")

# The catalogue order: the papers' claims in order. Checks not listed follow, sorted by id.
ORDER = (
    "signal.objective_vs_montecarlo",
    "signal.reduced_field_identity",
    "signal.equilibria_stability",
    "signal.ode_tracks_sga",
    "signal.attention_on_noise",
    "signal.low_temperature",
    "signal.alignment_30_runs",
    "signal.sign_ambiguity",
    "meanfield.zero_temperature_limit",
    "meanfield.zero_temperature_flow",
    "meanfield.projection_stationary",
    "meanfield.w2_bound",
    "meanfield.terminal_phase",
)

_loaded = False


def load() -> None:
    """Import every public module of the check packages (each registers its checks)."""
    global _loaded
    if _loaded:
        return
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if not info.name.startswith("_"):
                importlib.import_module(f"{package_name}.{info.name}")
    _loaded = True


def all_checks() -> list[Check]:
    """Every registered check, in catalogue order."""
    load()
    rank = {cid: i for i, cid in enumerate(ORDER)}
    return sorted(REGISTRY.values(), key=lambda c: (rank.get(c.id, len(ORDER)), c.id))
