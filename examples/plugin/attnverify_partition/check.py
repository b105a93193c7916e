"""The example's check (derived E Z against Monte Carlo) and claim (the paper's stated formula for E Z)."""
from __future__ import annotations

from attnverify.checks.claims import ClaimVerdict, claim, claim_rng
from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence
from attnverify.checks.params import Param
from attnverify.checks.registry import check
from attnverify_partition import SYMBOLS, mean_partition, monte_carlo, quantities


@check(id="partition.mean", claim="E sum_i exp(beta g_i) over L Gaussian scores has the derived closed form",
       source="example plugin",
       params=[Param("beta", float, 0.8, "inverse temperature", low=0.0, low_open=True, high=3.0),
               Param("sigma", float, 1.0, "score standard deviation", low=0.0, low_open=True, high=3.0),
               Param("L", int, 10, "number of scores", low=1, high=10000),
               Param("n", int, 20000, "Monte Carlo draws", low=100)])
def mean(p: dict, ctx: Context) -> Evidence:
    derived = float(mean_partition().subs({SYMBOLS["beta"]: p["beta"], SYMBOLS["sigma"]: p["sigma"],
                                           SYMBOLS["L"]: p["L"]}))
    m, se = monte_carlo(p["beta"], p["sigma"], p["L"], p["n"], ctx.rng("scores"))
    z = abs(m - derived) / se
    return Evidence(metric="|MC - closed form| / standard error", observed=z, threshold=4.0,
                    reason=f"a two-sided z-test at 4 standard errors of {p['n']} Monte Carlo draws (false-alarm rate "
                           "6e-5 for a correct closed form)", passed=bool(z <= 4.0), analytic=derived, numeric=m,
                    uncertainty=se)


@claim(id="Z.mean", paper="Z", needs=("partition.mean",))
def mean_claim(results: dict, stated) -> ClaimVerdict:
    """The stated formula of E Z, judged by proof or certified counterexample (the check passed: our derivation
    and our Monte Carlo agree)."""
    from attnverify.checks.judges import formula

    q = next(q for q in quantities() if q.name == stated.quantity)
    return formula(stated, q, {}, claim_rng(results, stated))
