"""The ``fltheory`` command: ``verify`` runs every registered check; ``bounds`` lists statements;
``figures`` draws the exact figures of each paper."""
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


def _cmd_figures(args) -> int:
    """Exact figures on built-in instances (seconds; no simulation)."""
    import numpy as np  # noqa: PLC0415

    from . import plotting, problems  # noqa: PLC0415
    from .papers.feddelavg import exact as fd_exact  # noqa: PLC0415
    from .papers.local_adaptivity import exact as la_exact  # noqa: PLC0415

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    # local adaptivity: bias of the fixed point against eta on the paper's worked three-client example
    H = np.array([[[2, 0.5], [0.5, 1]], [[1, 0], [0, 4]], [[3, -1], [-1, 2]]], float)
    fed = problems.QuadraticFederation(H, np.array([[1.0, 0], [0, 2], [-1, -1]]), np.array([0.5, 0.3, 0.2]))
    jacobi = np.array([np.diag(1 / np.diag(h)) for h in H])
    etas = np.logspace(-4, -1, 13)
    curves = {}
    for label, kw in [("local GD", dict(tau=5)), ("Jacobi, uncorrected", dict(tau=5, precond=jacobi)),
                      ("Jacobi + local correction", dict(tau=5, precond=jacobi, correction="local")),
                      ("tau = (1, 5, 10), uncorrected", dict(tau=[1, 5, 10])),
                      ("tau = (1, 5, 10) + local correction", dict(tau=[1, 5, 10], correction="local"))]:
        x = la_exact.fixed_point(fed, eta=etas[:, None], **kw).x
        curves[label] = np.linalg.norm(x - fed.x_star, axis=-1)
    path = out / "local_adaptivity_bias_vs_eta.png"
    plotting.bias_vs_eta_figure(etas, curves, path, title="local adaptivity: exact fixed points (worked example)")
    print(f"wrote {path}")
    # paper 001: which alpha, against Delta, on a quadratic instance
    q = problems.random_quadratic_federation(M=10, d=4, kappa=10, weights="dirichlet", seed=0)
    tau = 10
    for eb in (0.02, 0.5):
        cmp = fd_exact.alpha_comparison(q, eta=eb / float(q.L), tau=tau, Deltas=np.arange(tau + 1))
        path = out / f"feddelavg_alpha_vs_delta_etabeta{eb}.png"
        plotting.alpha_vs_delta_figure(cmp, path=path, title=rf"FedDelAvg: $\eta\beta={eb}$, $\tau={tau}$, M=10, d=4")
        print(f"wrote {path}")
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
    f = sub.add_parser("figures", help="draw the exact figures of each paper on built-in instances")
    f.add_argument("--out", type=Path, default=Path("fltheory-figures"))
    f.set_defaults(func=_cmd_figures)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
