"""How a stated claim is judged against what we derived and what we measured: one judge per kind, for every paper.

The three sides are the *stated* form (from a stated-claims file), the *derived* one (SymPy from the model) and the
*measured* one (numerics, with its uncertainty). The verdicts:

* ``inconclusive`` when derived and measured disagree (our own error: the claim cannot be read), or when the
  measurement cannot resolve the difference between the stated and the derived form;
* ``refuted`` when the stated form disagrees with a derived and a measured side that agree with each other; the
  counterexample names the point, the values and the distance in the measurement's own units (standard errors,
  bracket widths);
* ``holds`` when all three agree and the test could have seen a difference as small as the statement's own
  resolution; for an upper bound (``direction = "upper"``) a valid looser bound holds and the text says how loose.

Every sentence that states a comparison is produced here from the numbers it describes (:func:`relation`,
:func:`ratio_text`): no word such as "below" or "loose" is typed beside a number.

One module per kind: :mod:`.value_judge`, :mod:`.threshold_judge`, :mod:`.rate_judge`, :mod:`.formula_judge`,
:mod:`.bound_judge`; what they
share (the decision level, :class:`Measured`, the comparison sentences) in :mod:`.common`. The formula judge's
SymPy proof routes and Arb evidence are :mod:`.proof`, its measurement that grows until it resolves a difference
:mod:`.pooling`; a reported figure read to its resolution is :mod:`.rounding`.
"""
from attnverify.checks.judges.bound_judge import BoundPoint, BoundSeries, bound, read_bound
from attnverify.checks.judges.common import Z, Z_POWER, Measured, fmt, ratio_text, relation, sides_disagree
from attnverify.checks.judges.formula_judge import fixed_symbols, formula, stated_expression
from attnverify.checks.judges.rate_judge import rate, stated_exponent
from attnverify.checks.judges.threshold_judge import threshold
from attnverify.checks.judges.value_judge import half_unit, value

__all__ = ["BoundPoint", "BoundSeries", "Measured", "Z", "Z_POWER", "bound", "fixed_symbols", "fmt", "formula",
           "half_unit", "rate", "ratio_text", "read_bound", "relation", "sides_disagree", "stated_exponent",
           "stated_expression", "threshold", "value"]
