"""The commands that write documents: ``derive`` (a paper's derivation as text or LaTeX), ``latex`` (the
derivations of every registered paper and, optionally, the audit) and ``cite`` (the papers' BibTeX)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from attnverify.checks.params import InputError
from attnverify.cli.common import non_negative_int, parse_sets
from attnverify.cli.options import RunOptions
from attnverify.cli.run import run_with_outputs


def cmd_derive(args: argparse.Namespace) -> int:
    """Print a paper's derivation, at the model options given with --set (validated as ``run`` validates them)."""
    from attnverify.derive import render

    width = non_negative_int("--width", args.width) if args.width is not None else None
    print(render(args.model, latex=args.latex, width=width, options=parse_sets(args.sets)))
    return 0


def cmd_latex(args: argparse.Namespace) -> int:
    """Write the LaTeX document: the derivations of the papers named (model names or keys; all by default), and
    the audit of their checks (run now, or read with --from-json as it was written)."""
    from attnverify.checks.registry import paper
    from attnverify.render.latex import document
    from attnverify.outputs import write_text

    models = tuple(dict.fromkeys(paper(name).model for name in args.models)) if args.models else None
    out = Path(args.output)
    figures_dir = out.parent / f"{out.stem}_figures"
    report, figures = None, {}
    if args.derivations_only:
        if args.from_json:
            raise InputError("--derivations-only and --from-json exclude each other")
    elif args.from_json:
        try:
            report = json.loads(Path(args.from_json).read_text())
            report["checks"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"--from-json: cannot read a report from {args.from_json!r} ({type(exc).__name__})")
        from attnverify.render.report import plot_file_name

        base = Path(args.from_json).parent
        for c in report["checks"]:
            found = []
            i = 0
            while (base / plot_file_name(c["id"], i)).is_file():
                found.append(base / plot_file_name(c["id"], i))
                i += 1
            if found:
                figures[c["id"]] = found
    else:
        from attnverify.render.report import plot_file_name, report_dict, save_plot

        rep = run_with_outputs(RunOptions(seed=non_negative_int("--seed", args.seed), quiet=args.quiet),
                               None if models is None else list(models))
        report = report_dict(rep)
        for r in rep.results:
            for i, plot in enumerate(r.evidence.plots if r.evidence else []):
                figures_dir.mkdir(parents=True, exist_ok=True)
                path = figures_dir / plot_file_name(r.id, i)
                save_plot(plot, path)
                figures.setdefault(r.id, []).append(path)
    rel = {cid: [_relative(p, out.parent) for p in paths] for cid, paths in figures.items()}
    write_text(out, document(report, figures=rel, fragment=args.fragment, models=models))
    print(f"wrote {args.output}")
    return 0


def _relative(path: Path, base: Path) -> str:
    import os

    return os.path.relpath(path.resolve(), base.resolve()).replace(os.sep, "/")




def cmd_cite(args: argparse.Namespace) -> int:
    """Print the BibTeX entries of the papers named (model names or keys), or of every registered paper."""
    from attnverify.checks.registry import paper, papers
    from attnverify.references import bibtex

    chosen = [paper(name) for name in args.models] if args.models else list(papers())
    unique = list({p.model: p for p in chosen}.values())
    print("\n".join(bibtex(p) for p in unique), end="")
    return 0
