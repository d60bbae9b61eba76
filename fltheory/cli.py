"""The ``fltheory`` command: ``verify`` runs every registered check; ``bounds`` lists statements."""
from __future__ import annotations

import argparse
import importlib
import signal
import sys
from pathlib import Path

from . import verify as _verify


def _cmd_verify(args) -> int:
    papers = args.paper or None
    report = _verify.run(papers, quick=args.quick, seed=args.seed, progress=not args.no_progress, only=args.only)
    print(report.table())
    folder = report.write(args.out)
    print(f"report written to {folder}/ (report.md, report.json, figures/)")
    if not report.ok:
        bad = [v.check for v in report.verdicts if not v.ok]
        print(f"UNEXPECTED verdicts: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


def _cmd_bounds(args) -> int:
    for p in args.paper or _verify.PAPERS:
        mod = importlib.import_module(f"fltheory.papers.{p}.bounds")
        print(f"== {p}")
        for st in mod.STATEMENTS:
            print(f"- {st.describe()}")
            if args.latex:
                print(f"    {st.latex()}")
    return 0


def main(argv=None) -> int:
    if hasattr(signal, "SIGPIPE"):  # `fltheory bounds | head` should end quietly
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    parser = argparse.ArgumentParser(prog="fltheory", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="run every registered check and write a report")
    v.add_argument("--quick", action="store_true", help="fewer instances per check (a first look)")
    v.add_argument("--paper", action="append", choices=_verify.PAPERS, help="restrict to a paper (repeatable)")
    v.add_argument("--only", help="run only checks whose name contains this text")
    v.add_argument("--seed", type=int, default=0)
    v.add_argument("--out", type=Path, default=Path("fltheory-report"))
    v.add_argument("--no-progress", action="store_true")
    v.set_defaults(func=_cmd_verify)
    b = sub.add_parser("bounds", help="list every statement (with --latex, render it)")
    b.add_argument("--paper", action="append", choices=_verify.PAPERS)
    b.add_argument("--latex", action="store_true")
    b.set_defaults(func=_cmd_bounds)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
