"""The rate judge's three readings of a stated rate, on a measured slope given by hand: ``upper`` (decays at least
this fast), ``lower`` (decays no faster: the mirror image) and ``exact``."""
from __future__ import annotations

import pytest

from attnverify.checks.judges import Measured, rate
from attnverify.checks.stated import parse_claims

POINTS = [10.0, 100.0, 1000.0]


def _stated(direction: str, form: str = "n**(-1/2)"):
    doc = {"claim": [{"id": "mine.r", "model": "signal", "kind": "rate", "stated": form, "variable": "n",
                      "direction": direction}]}
    return parse_claims(doc, "test")[0]


@pytest.mark.parametrize("direction, measured, verdict", [
    ("upper", -0.8, "holds"),      # decays faster than n^-1/2: the O(.) bound holds (loose)
    ("upper", -0.2, "refuted"),    # decays slower: the bound fails
    ("lower", -0.2, "holds"),      # decays no faster than n^-1/2: holds
    ("lower", -0.8, "refuted"),    # decays faster than the stated lower bound allows
    ("lower", -0.5, "holds"),      # within the uncertainty
    ("exact", -0.8, "refuted"),
    ("exact", -0.5, "holds"),
])
def test_each_direction_reads_the_measured_slope_its_own_way(direction, measured, verdict):
    v = rate(_stated(direction), Measured(measured, 0.01, how="by hand"), POINTS)
    assert v.verdict == verdict, str(v.reason)


def test_an_unknown_direction_is_refused_when_the_file_is_read():
    from attnverify.checks.params import InputError

    with pytest.raises(InputError, match="direction"):
        _stated("sideways")
