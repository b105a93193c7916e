"""The worked example of a converted judge: ``judge.value`` returns a structured reason whose numbers are typed
parts, printed with the digits that tell them apart (a measured value that differs from the stated figure in the
sixth digit is never printed equal to it beside the word "above")."""
from __future__ import annotations

import json
import re

from attnverify.checks import judges as judge
from attnverify.checks.claims import ClaimResult
from attnverify.checks.reason import Number, Reason
from attnverify.checks.stated import parse_claims
from attnverify.render import reasons as R


def _value_claim(stated, **extra):
    (s,) = parse_claims({"claim": [{"id": "x.v", "model": "signal", "kind": "value", "stated": stated, **extra}]}, "t")
    return s


def test_value_reason_keeps_its_numbers_typed():
    v = judge.value(_value_claim(0.9965), judge.Measured(0.9873, 0.0006, "30 runs"))
    assert v.verdict == "refuted" and isinstance(v.reason, Reason) and isinstance(v.condition, Reason)
    numbers = [p for p in v.reason.parts() if isinstance(p, Number)]
    assert (numbers[0].value, numbers[0].se) == (0.9873, 0.0006) and numbers[1].value == 0.9965
    assert R.plain(v.reason).startswith("the measured 0.9873 ± 0.0006 (30 runs) is below the stated 0.9965 by 15.3")
    row = ClaimResult("x.v", "x", "", "", v.verdict, v.reason, v.condition, [], v.evidence)
    stored = json.loads(json.dumps(row.as_dict()))
    assert Reason.from_dict(stored["condition_parts"]) == v.condition and "0.9873 ± 0.0006" in stored["condition"]


def test_numbers_called_different_never_print_alike():
    # 0.99650004 +- 1e-9 against the stated 0.9965: 4e-8 apart, 40 standard errors; at the usual 5 digits both
    # would read 0.9965 beside the word "above"
    v = judge.value(_value_claim(0.9965, resolution=1e-6), judge.Measured(0.99650004, 1e-9, "exact"))
    assert v.verdict == "refuted"
    text = R.plain(v.reason)
    assert "above the stated" in text
    measured, stated = re.search(r"measured ([0-9.]+) ± .* stated ([0-9.]+)", text).groups()
    assert measured != stated and float(measured) == 0.99650004 and float(stated) == 0.9965
