"""Regenerate the README's generated blocks from a run, so that what the README shows is what the tool computes:

    python -m attnverify.readme            # rewrite the blocks in README.md (quick profile, seed 0)
    python -m attnverify.readme --check    # exit 1 when a block has drifted from a fresh run

A block sits between ``<!-- <name>:begin -->`` and ``<!-- <name>:end -->`` lines:

* ``audit``: the audit table of ``attnverify run`` (quick profile, seed 0), without the seconds column's values
  (timings differ from run to run);
* ``ledger``: the claims ledger of the same run as Markdown (``attnverify claims --markdown``).

The drift test (tests/test_readme.py) compares the claim ids and verdicts and the checks' verdicts of the
README's blocks with a fresh run: a change of code that moves a verdict must come with a regenerated README.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from attnverify.checks.params import InputError

BLOCKS = ("audit", "ledger")


def _pattern(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- {name}:begin -->\n)(.*?)(<!-- {name}:end -->)", re.S)


def blocks_of(report) -> dict[str, str]:
    """The generated text of every block, from one report (checks and claims of a run)."""
    from attnverify.render.report import claims_markdown, table

    # timings are not reproducible: each becomes a dash, right-aligned in the column's width
    audit = re.sub(r"[ \t]+\d+\.\d[ \t]*$", lambda m: "-".rjust(len(m.group(0).rstrip())), table(report), flags=re.M)
    head = f"From `attnverify claims --profile {report.profile} --seed {report.seed}` (version {report.version})."
    return {"audit": f"```text\n{audit}\n```\n", "ledger": f"{head}\n\n{claims_markdown(report)}\n"}


def read_blocks(text: str) -> dict[str, str]:
    """The blocks of a README text (name -> content)."""
    out = {}
    for name in BLOCKS:
        m = _pattern(name).search(text)
        if m:
            out[name] = m.group(2)
    return out


def verdicts(blocks: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    """What the drift test compares: (check id, verdict) rows of the audit block and (claim id, verdict) rows of
    the ledger block."""
    audit = re.findall(r"^(\S+\.\S+)\s+(PASS|FAIL|ERROR)\b", blocks.get("audit", ""), re.M)
    ledger = re.findall(r"^\| `([^`]+)` \| [^|]* \| \*\*([a-z_]+)\*\*", blocks.get("ledger", ""), re.M)
    return {"audit": audit, "ledger": ledger}


def fresh_report(seed: int = 0, store: Any = None):
    """The quick audit of every registered check, with its claims ledger (``store``: a task store, as ``attnverify
    run`` uses one)."""
    from attnverify.checks.runner import run

    return run(None, profile="quick", seed=seed, store=store)


def rewrite(text: str, blocks: dict[str, str]) -> str:
    for name, content in blocks.items():
        pattern = _pattern(name)
        if not pattern.search(text):
            raise InputError(f"README: no block '<!-- {name}:begin -->' ... '<!-- {name}:end -->'")
        text = pattern.sub(lambda m: m.group(1) + content + m.group(3), text, count=1)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attnverify.readme", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a block has drifted; write nothing")
    parser.add_argument("--readme", default="README.md", help="the file (default README.md)")
    args = parser.parse_args(argv)
    path = Path(args.readme)
    text = path.read_text(encoding="utf-8")
    new = blocks_of(fresh_report())
    if args.check:
        drift = verdicts(read_blocks(text)) != verdicts(new)
        print("README drifted from a fresh run" if drift else "README matches a fresh run")
        return 1 if drift else 0
    path.write_text(rewrite(text, new), encoding="utf-8")
    print(f"rewrote {', '.join(new)} in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
