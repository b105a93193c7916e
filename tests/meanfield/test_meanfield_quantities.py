"""Paper B's quantities (attnverify list --quantities, attnverify audit): c, C1, field_error_exponent and X_inf,
each with a derived side from the theory and a measurement by numerics only."""
from __future__ import annotations

import json
import textwrap

import attnverify
from attnverify.cli import main


def test_list_quantities_names_paper_bs(capsys):
    assert main(["list", "--quantities"]) == 0
    out = capsys.readouterr().out
    for name in ("meanfield.c  ()", "meanfield.C1  ()", "meanfield.field_error_exponent  (beta)",
                 "meanfield.X_inf  (phi, psi)"):
        assert name in out


def test_the_derived_sides():
    assert attnverify.quantity("meanfield.c") == 1 / 3                         # gamma/|B^T x*| = 1/3 at x* = e_2
    assert abs(attnverify.quantity("meanfield.C1") - 1.0) < 1e-9
    assert attnverify.quantity("meanfield.field_error_exponent") == -1.0
    assert abs(attnverify.quantity("meanfield.X_inf", phi=0.0, psi=1.5707963267948966)) < 1e-15   # X_inf(e_1) = 0


def test_audit_judges_claims_on_the_quantities(tmp_path, capsys):
    path = tmp_path / "mine.toml"
    path.write_text(textwrap.dedent('''
        [[claim]]
        id = "mine.c"
        model = "meanfield"
        kind = "value"
        quantity = "c"
        stated = 0.3333
        uncertainty = 5e-5
        resolution = 1e-3

        [[claim]]
        id = "mine.c_wrong"
        model = "meanfield"
        kind = "value"
        quantity = "c"
        stated = 0.5

        [[claim]]
        id = "mine.C1"
        model = "meanfield"
        kind = "value"
        quantity = "C1"
        stated = 1.0

        [[claim]]
        id = "mine.exponent"
        model = "meanfield"
        kind = "rate"
        quantity = "field_error_exponent"
        stated = "beta**(-0.5)"
        variable = "beta"
        direction = "upper"

        [[claim]]
        id = "mine.field"
        model = "meanfield"
        kind = "formula"
        quantity = "X_inf"
        stated = "(e1*Ax1 + e2*Ax2)/nb"
    '''))
    out = tmp_path / "audit.json"
    assert main(["audit", str(path), "--json", str(out)]) == 0
    rows = {r["id"]: r for r in json.loads(out.read_text())["claims"]}
    assert rows["mine.c"]["verdict"] == "holds"
    assert rows["mine.c_wrong"]["verdict"] == "refuted"
    assert rows["mine.C1"]["verdict"] == "holds"
    assert rows["mine.exponent"]["verdict"] == "holds" and "loose" in rows["mine.exponent"]["reason"]
    assert rows["mine.field"]["verdict"] == "refuted"          # the explicit field without its tangent projection


def test_a_bad_option_is_one_line_naming_the_claim(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text('[[claim]]\nid = "mine.x"\nmodel = "meanfield"\nkind = "value"\nquantity = "c"\nstated = 1.0\n'
                    'at = { Q = "1,0;0,1", K = "1,0;0,1", V = "1,0;0,1" }\n')
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "mine.x" in err
