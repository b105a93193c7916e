"""Issue 31, item 4: bad input is refused before any work, in one line that names it; the Python API validates as
the command line does."""
from __future__ import annotations

import pytest

import attnverify
from attnverify.checks.audit import resolve
from attnverify.checks.params import InputError
from attnverify.checks.stated import parse_claims

RIGHT = "theta**2*w**2 + 2*beta*sigma**2*theta*rho*w + beta**2*sigma**4"


def _resolve(**fields):
    base = {"id": "mine.objective", "model": "signal", "kind": "formula", "quantity": "J_limit", "stated": RIGHT}
    return resolve(parse_claims({"claim": [{**base, **fields}]}, "mine.toml"))


@pytest.mark.parametrize("at, named", [
    ({"R": -5}, "R"), ({"theta": -1}, "theta"), ({"R": 600, "L": 500}, "R"), ({"sigma": "abc"}, "sigma"),
    ({"rho": 5}, "rho"),
])
def test_an_at_value_outside_the_domain_is_refused_before_any_work(at, named):
    with pytest.raises(InputError) as err:
        _resolve(at=at)
    line = str(err.value)
    assert "\n" not in line and "mine.objective" in line and "'at'" in line and named in line


def test_a_value_claim_with_unbound_symbols_is_refused():
    with pytest.raises(InputError) as err:
        _resolve(kind="value", stated=1.0, at={"R": 500, "L": 10500})
    assert "mine.objective" in str(err.value) and "rho" in str(err.value)


def test_a_value_claim_with_every_symbol_bound_is_accepted():
    (r,) = _resolve(kind="value", stated=1.0, at={"R": 500, "L": 10500, "rho": 0.5, "theta": 1.0, "beta": 1.0,
                                                   "sigma": 1.0})
    assert r.quantity.name == "J_limit"


def test_the_api_refuses_what_the_command_line_refuses():
    with pytest.raises(InputError):
        attnverify.quantity("signal.J_limit", beta=-1, R=200, L=1050, rho=0.5, theta=1.0, sigma=1.0)
    with pytest.raises(InputError):
        attnverify.quantity("signal.J_limit", beta=1.0, R=2000, L=1050, rho=0.5, theta=1.0, sigma=1.0)
    with pytest.raises(InputError):
        attnverify.formula("signal.J_limit", theta=-1)
    # an admissible point still gives the number: beta = sigma = 1, theta = 0 is outside (theta > 0), so theta = 1,
    # rho = 0: w = R/L, J = theta^2 w^2 + 0 + beta^2 sigma^4 = (1/2)^2 + 1 at R/L = 1/2
    v = attnverify.quantity("signal.J_limit", beta=1.0, sigma=1.0, theta=1.0, rho=0.0, R=500, L=1000)
    assert v == pytest.approx(1.25, rel=1e-12)


def test_derive_refuses_the_options_a_run_refuses():
    from attnverify.checks.registry import paper

    # beta = 1e8 with the default sigma and L breaks beta^2 sigma^2 <= log L, which the run checks
    with pytest.raises(InputError):
        paper("signal").options({"beta": "1e8"})


def test_a_matrix_in_at_takes_the_command_line_syntax():
    (r,) = resolve(parse_claims({"claim": [{"id": "mine.limit", "model": "meanfield", "kind": "formula",
                                            "quantity": "X_inf", "stated": "phi", "at": {"Q": "1,0;0,2"}}]},
                                "mine.toml"))
    assert r.options["Q"].tolist() == [[1.0, 0.0], [0.0, 2.0]]


def test_an_unknown_symbol_is_named_with_the_file_and_the_claim():
    with pytest.raises(InputError) as err:
        _resolve(stated="theta**2*omega + beta**2*sigma**4")
    line = str(err.value)
    assert "mine.toml" in line and "mine.objective" in line and "omega" in line and "NameError" not in line


def test_a_caret_is_a_power():
    from attnverify.checks.judges import stated_expression

    (r,) = _resolve(stated="theta^2*w^2 + 2*beta*sigma^2*theta*rho*w + beta^2*sigma^4")
    (same,) = _resolve()
    assert stated_expression(r.stated, r.quantity, r.options) == stated_expression(same.stated, same.quantity,
                                                                                    same.options)
