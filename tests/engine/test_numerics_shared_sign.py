"""One random sign per sequence, shared by every ``rademacher`` component (the model file's semantics,
docs/models.md): the numerics must draw it once per sequence, not once per component."""
import numpy as np

from attnverify.numerics.engine import Attention, MixtureSpec, gaussian, sample_full, sample_iid, sample_reduced


def spec() -> MixtureSpec:
    # two signed components with means +1 and -2 along xi and (almost) no noise, and an unsigned one at 3
    return MixtureSpec(d=3, directions=("xi",),
                       components=(gaussian("a", 2, [1.0], [1e-9], 1e-9, rademacher=True),
                                   gaussian("b", 3, [-2.0], [1e-9], 1e-9, rademacher=True),
                                   gaussian("c", 1, [3.0], [1e-9], 1e-9)),
                       attention=Attention(beta=1.0, A=[[1.0]], V=[[1.0]]))


def test_full_and_reduced_sequences_share_one_sign():
    s = spec()
    for draw in (lambda rng: sample_full(s, 4000, rng), lambda rng: sample_reduced(s, 4000, rng)[0]):
        X = draw(np.random.default_rng(3))[:, :, 0]                  # (n, L) coordinate along xi
        eps = np.sign(X[:, 0])                                       # the sign of the first token of component a
        assert np.all(np.sign(X[:, :2]) == eps[:, None])             # a: eps * 1
        assert np.all(np.sign(X[:, 2:5]) == -eps[:, None])           # b: eps * (-2), the same eps
        assert np.all(X[:, 5] > 0)                                   # c: fixed
        # a fair sign: 4000 draws, the count of +1 within 5 standard deviations (sd = sqrt(4000)/2) of 2000
        assert abs(np.sum(eps > 0) - 2000) < 5 * np.sqrt(4000) / 2


def test_iid_tokens_share_one_sign_per_repetition():
    s = spec()
    Y, labels = sample_iid(s, 50, 400, np.random.default_rng(5))
    x = Y[:, :, 0]
    signed = np.where(labels == 1, -x, np.where(labels == 0, x, np.nan))      # eps itself for a and b tokens
    for row in np.sign(signed):
        vals = row[np.isfinite(row)]
        assert vals.size == 0 or np.all(vals == vals[0])
