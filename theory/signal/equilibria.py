r"""The equilibria of Paper A's reduced field rho' = F(rho) = (1 - rho^2) J'(rho) on [-1, 1], certified in ball arithmetic.

rho = +-1 are always equilibria, with F'(+-1) = -+2 J'(+-1); the interior ones are the zeros of J' in (-1, 1).  J'
and J'' are evaluated in Arb ball arithmetic (FLINT through python-flint, 128 bits: every operation returns a ball
containing the exact result); [-1, 1] is covered by boxes that are either discarded because 0 is not in J'(box), or
shown by the interval Newton test to contain exactly one zero, or left unresolved at width 1e-13 (a degenerate
zero).  Stability is F'(rho) < 0, with F' enclosed on the box.  Each equilibrium carries a certificate
(:mod:`attnverify.theory.certified`).  :meth:`attnverify.theory.signal.SignalTheory.equilibria` is the entry point.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import flint
import sympy as sp
from flint import arb

import attnverify.theory.certified as C
from attnverify.theory.signal.model import ARB_PREC, ARGS, rho


@dataclass(frozen=True)
class Equilibrium:
    """An equilibrium rho of rho' = F(rho), its eigenvalue F'(rho) and stability (F'(rho) < 0).

    ``certified`` is False only when ball arithmetic could not prove the sign of F' or the uniqueness of the zero
    (a degenerate zero)."""

    rho: float
    eigenvalue: float
    stable: bool
    certified: bool = True
    enclosure: tuple | None = field(default=None, compare=False)             # [lo, hi] holding rho (outward)
    eigenvalue_enclosure: tuple | None = field(default=None, compare=False)  # [lo, hi] holding F'(rho)
    certificate: dict | None = field(default=None, compare=False, hash=False)  # attnverify.theory.certified dict


def field_functions(J: sp.Expr, F: sp.Expr) -> dict[str, Callable]:
    """J', J'' and F' of the objective ``J`` and the field ``F`` (SymPy, in rho, theta, beta, sigma, R, L, d) as ball
    functions of those arguments."""
    Jp = sp.diff(J, rho)
    Jpp = sp.diff(Jp, rho)
    Fp = sp.diff(F, rho)
    return {"Jp": C.lambdify_arb(Jp, ARGS), "Jpp": C.lambdify_arb(Jpp, ARGS), "Fp": C.lambdify_arb(Fp, ARGS)}


def _stability_text(ev: arb) -> str:
    lo, hi = C.lower(ev), C.upper(ev)
    rel = "< 0 (attracting)" if ev < 0 else "> 0 (repelling)" if ev > 0 else "contains 0 (undecided)"
    return f"F' in {C.interval_text(lo, hi, 4)} {rel}"


def _equilibrium(rho_box: arb, lo: float, hi: float, ev: arb, unique_in: tuple | None, pole: bool) -> Equilibrium:
    """An Equilibrium with its certificate (enclosure of rho and of the eigenvalue F'(rho))."""
    r = 0.5 * (lo + hi) if not pole else lo
    certified = not ev.contains(0) and (pole or unique_in is not None)
    if pole:   # rho = +-1 is exact; what is certified is the sign of the eigenvalue
        proven = (f"rho = {r:g} is an equilibrium (F = (1 - rho^2) J'); its eigenvalue F'({r:g}) lies in the "
                  "enclosure (stable iff it is < 0)")
        cert = C.certificate(f"F'({r:g})", proven, C.lower(ev), C.upper(ev), ARB_PREC,
                             "attracting" if ev < 0 else "repelling" if ev > 0 else "sign undecided")
        cert["rho_enclosure"] = [lo, hi]
        return Equilibrium(r, float(ev.mid()), bool(ev < 0), certified, enclosure=(lo, hi),
                           eigenvalue_enclosure=(C.lower(ev), C.upper(ev)), certificate=cert)
    if unique_in is not None:
        u = (C.lower(unique_in[0]), C.upper(unique_in[1]))
        proven = (f"J' has exactly one zero in [{u[0]!r}, {u[1]!r}] (interval Newton), it lies in the enclosure; "
                  "F' there has the stated sign")
        extra = f"unique in {C.interval_text(*u, 4)}, {_stability_text(ev)}"
    else:
        proven = "every zero of J' near here lies in the enclosure (uniqueness not proven: degenerate zero)"
        extra = f"not proven unique, {_stability_text(ev)}"
    cert = C.certificate("rho*", proven, lo, hi, ARB_PREC, extra)
    cert["eigenvalue_enclosure"] = [C.lower(ev), C.upper(ev)]
    return Equilibrium(r, float(ev.mid()), bool(ev < 0), certified,
                       enclosure=(lo, hi), eigenvalue_enclosure=(C.lower(ev), C.upper(ev)), certificate=cert)


def certified_equilibria(fn: dict[str, Callable], vals: tuple) -> tuple[Equilibrium, ...]:
    """Every equilibrium on [-1, 1] at the validated parameters ``vals`` = (theta, beta, sigma, R, L, d), from the
    ball functions ``fn`` of :func:`field_functions`, sorted by rho (module docstring)."""
    with flint.ctx.workprec(ARB_PREC):
        P = [arb(v) for v in vals]
        h = lambda X: fn["Jp"](X, *P)                   # noqa: E731  interior zeros of F = zeros of J'
        dh = lambda X: fn["Jpp"](X, *P)                  # noqa: E731
        poles = [fn["Fp"](arb(r0), *P) for r0 in (-1, 1)]
        if not all(ev.is_finite() and math.isfinite(C.lower(ev)) and math.isfinite(C.upper(ev)) for ev in poles):
            raise ValueError("parameters too extreme: F'(+-1) is not a finite double at theta, beta, sigma = "
                             f"{vals[0]:g}, {vals[1]:g}, {vals[2]:g} (the scores beta sigma, beta theta leave the range "
                             "of the closed form)")
        boxes = C.root_boxes(h, dh, -1, 1, 1e-13, 20000)
        out = [_equilibrium(arb(r0), float(r0), float(r0), ev, None, True) for r0, ev in zip((-1, 1), poles)]
        for r in boxes:
            lo, hi = C.lower(r.lo), C.upper(r.hi)
            if r.hi >= 1 or r.lo <= -1 or abs(abs(0.5 * (lo + hi)) - 1) < 1e-9:
                if not r.unique:   # a degenerate zero of J' at a pole: the pole's stability is not certified
                    out = [dataclasses.replace(e, certified=False) if e.rho == round(0.5 * (lo + hi)) else e
                           for e in out]
                continue           # a zero of J' at rho = +-1 coincides with the endpoint equilibrium
            ev = fn["Fp"](C.hull(r.lo, r.hi), *P)
            out.append(_equilibrium(C.hull(r.lo, r.hi), lo, hi, ev, r.unique_in, False))
    return tuple(_merge_equilibria(sorted(out, key=lambda e: e.rho)))


def _merge_equilibria(eqs: list[Equilibrium]) -> list[Equilibrium]:
    """Boxes that touch (a zero on a shared edge, found from both sides) are one equilibrium."""
    out: list[Equilibrium] = []
    for e in eqs:
        if out and e.enclosure[0] <= out[-1].enclosure[1] + 1e-12 and abs(e.rho) < 1 and abs(out[-1].rho) < 1:
            prev = out.pop()
            lo, hi = min(prev.enclosure[0], e.enclosure[0]), max(prev.enclosure[1], e.enclosure[1])
            keep = prev if prev.certified else e
            cert = dict(keep.certificate, enclosure=[lo, hi], width=hi - lo,
                        text=f"certified: rho* in {C.interval_text(lo, hi)}, "
                             + keep.certificate["text"].split(", ", 1)[1])
            out.append(dataclasses.replace(keep, rho=0.5 * (lo + hi), enclosure=(lo, hi), certificate=cert,
                                           certified=prev.certified and e.certified))
        else:
            out.append(e)
    return out
