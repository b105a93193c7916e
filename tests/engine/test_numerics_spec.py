"""The numeric model spec (attnverify.numerics.engine.spec): a valid model's derived fields, and bad models refused
with one line that names the field, before any work."""
import numpy as np
import pytest

from attnverify.numerics.engine import Attention, Component, MixtureSpec, gaussian, sphere


def good(**over):
    fields = dict(d=4, directions=("xi", "zeta"),
                  components=(gaussian("sig", 3, [0.5, 0.0], [1.0, 0.5], 1.0, rademacher=True),
                              sphere("ring", 2, 1.5),
                              gaussian("noise", 5, 0, [1.0, 1.0], 2.0)),
                  attention=Attention(beta=2.0, A=np.eye(2), V=[[1.0, 0.5], [0.0, 1.0]], a_perp=0.5, v_perp=3.0))
    fields.update(over)
    return MixtureSpec(**fields)


def test_a_valid_spec_and_its_derived_fields():
    spec = good()
    assert spec.L == 10 and spec.k == 2
    assert [(s.start, s.stop) for s in spec.slices] == [(0, 3), (3, 5), (5, 10)]
    np.testing.assert_array_equal(spec.weights, [0.3, 0.2, 0.5])
    np.testing.assert_array_equal(spec.components[0].mean, [0.5, 0.0, 0.0, 0.0])   # stored as a length-d vector
    np.testing.assert_array_equal(spec.matrix("A"), np.diag([1.0, 1.0, 0.5, 0.5]))
    np.testing.assert_array_equal(spec.matrix("V")[:2, :2], [[1.0, 0.5], [0.0, 1.0]])
    assert spec.matrix("V")[3, 3] == 3.0 and spec.matrix("V")[0, 3] == 0.0
    assert spec.span_matrix("A").shape == (3, 3)
    assert spec.attention.scale == 2.0
    with pytest.raises(ValueError):
        spec.components[0].mean[0] = 1.0                       # read-only


def test_a_mean_given_in_d_coordinates_and_a_full_matrix():
    spec = good(components=(gaussian("a", 2, [0.3, -0.2, 0.0, 0.0], [1.0, 1.0], 1.0),),
                attention=Attention(beta=1.0, A=np.eye(4), V=np.eye(4), a_perp=None, v_perp=None, query="token"))
    np.testing.assert_array_equal(spec.components[0].mean, [0.3, -0.2, 0.0, 0.0])
    assert not spec.block
    with pytest.raises(ValueError, match="block form"):
        spec.span_matrix("A")


def _att(**over):
    a = dict(beta=1.0, A=np.eye(2), V=np.eye(2))
    a.update(over)
    return Attention(**a)


BAD = [
    ("d", dict(d=0)),
    ("d", dict(d=2.5)),
    ("directions", dict(directions=("xi", "xi"))),
    ("directions", dict(directions=("a", "b", "c", "d", "e"))),
    ("d must be > k", dict(d=2)),
    ("components", dict(components=())),
    ("count", dict(components=(gaussian("a", -1, 0, [1, 1], 1), gaussian("b", 3, 0, [1, 1], 1)))),
    ("count", dict(components=(gaussian("a", 2.0, 0, [1, 1], 1),))),
    ("L = 0", dict(components=(gaussian("a", 0, 0, [1, 1], 1),))),
    ("names", dict(components=(gaussian("a", 1, 0, [1, 1], 1), gaussian("a", 1, 0, [1, 1], 1)))),
    ("mean", dict(components=(gaussian("a", 1, [1.0, 2.0, 3.0], [1, 1], 1),))),
    ("zero outside", dict(components=(gaussian("a", 1, [1.0, 2.0, 3.0, 0.0], [1, 1], 1),))),
    ("mean", dict(components=(gaussian("a", 1, [np.nan, 0.0], [1, 1], 1),))),
    ("sd", dict(components=(gaussian("a", 1, 0, [1.0, 0.0], 1),))),
    ("sd", dict(components=(gaussian("a", 1, 0, [1.0], 1),))),
    ("sd_perp", dict(components=(gaussian("a", 1, 0, [1, 1], -1.0),))),
    ("sd_perp", dict(components=(gaussian("a", 1, 0, [1, 1], None),))),
    ("law", dict(components=(Component("a", 1, law="cauchy"),))),
    ("radius", dict(components=(sphere("a", 1, 0.0),))),
    ("sphere", dict(components=(Component("a", 1, law="sphere", radius=1.0, sd=[1, 1]),))),
    ("rademacher", dict(components=(Component("a", 1, sd=[1, 1], sd_perp=1.0, rademacher="yes"),))),
    ("beta", dict(attention=_att(beta=0.0))),
    ("beta", dict(attention=_att(beta=float("inf")))),
    ("tau", dict(attention=_att(tau=-1.0))),
    ("query", dict(attention=_att(query="cross"))),
    ("attention.A", dict(attention=_att(A=np.eye(3)))),
    ("attention.A", dict(attention=_att(A=np.eye(4)))),           # block form (a_perp given) needs k x k
    ("attention.V", dict(attention=_att(V=np.eye(2), v_perp=None))),
    ("attention.A", dict(attention=_att(A=[[1.0, np.inf], [0.0, 1.0]]))),
    ("v_perp", dict(attention=_att(v_perp="x"))),
    ("attention must be", dict(attention="beta*<q, x>")),
]


@pytest.mark.parametrize("needle,over", BAD, ids=[f"{i}-{b[0]}" for i, b in enumerate(BAD)])
def test_bad_specs_are_refused_with_one_line(needle, over):
    with pytest.raises(ValueError) as err:
        good(**over)
    msg = str(err.value)
    assert "\n" not in msg and needle in msg, msg
