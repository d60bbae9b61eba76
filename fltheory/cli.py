"""The ``fltheory`` command: ``verify`` runs every registered check and writes the report; ``bounds``
lists every statement by name (``--latex`` prints its LaTeX, ``--out FILE.tex`` writes a document
that compiles); ``figures`` draws the exact figures of each paper."""
from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from . import verify as _verify
from .validation import InputError, InputTypeError, shown


def _cmd_verify(args) -> int:
    papers = args.paper or None
    try:
        report = _verify.run(papers, quick=args.quick, seed=args.seed, progress=not args.no_progress, only=args.only)
    except InputError as err:  # e.g. --only matching no check: an error, never an empty "all as expected"
        print(f"fltheory verify: {err}", file=sys.stderr)
        return 2
    print(report.table())
    folder = report.write(args.out, figures=not args.no_figures)
    if report.figures:
        print(f"report written to {folder}/ (report.md, report.json, {len(report.figures)} figures in figures/)")
    else:
        print(f"report written to {folder}/ (report.md, report.json); figures skipped: {report.figures_skipped}")
    if not report.ok:
        bad = [v.check for v in report.verdicts if not v.ok]
        print(f"UNEXPECTED verdicts: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


def paper_statements(paper: str) -> list:
    """The statements of a paper, in the order its ``bounds`` room lists them (``fltheory.statements``)."""
    from .symbolic import statements  # noqa: PLC0415

    return list(statements(paper).values())


_TEXT_ESCAPES = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
                 "^": r"\^{}", "_": r"\_", "%": r"\%", "~": r"\~{}"}


def _tex_text(text: str) -> str:
    """Plain text for LaTeX's text mode: special characters escaped, anything outside ASCII spelled out."""
    import unicodedata  # noqa: PLC0415

    out = []
    for ch in text:
        if ch in _TEXT_ESCAPES:
            out.append(_TEXT_ESCAPES[ch])
        elif ord(ch) < 128:
            out.append(ch)
        else:  # pdflatex without extra packages: name the character instead of failing on it
            out.append(unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode() or
                       f"[{unicodedata.name(ch, 'symbol').lower()}]")
    return "".join(out)


def latex_document(papers=None) -> str:
    """A LaTeX document (article class, amsmath and amssymb only) listing every statement of ``papers``:
    its name, equation number, whether it is printed or corrected, and its formula with conditions.

    The document compiles with ``pdflatex``; a researcher copies the ``equation*`` bodies.
    """
    from .plotting import paper_title  # noqa: PLC0415 - only reads the package docstring (no matplotlib)

    if papers is not None and (isinstance(papers, (str, bytes)) or not hasattr(papers, "__iter__")):
        raise InputTypeError(f"papers must be a list of paper names or None; got {shown(papers)}")
    papers = list(papers or _verify.PAPERS)
    statements = {p: paper_statements(p) for p in papers}  # every name checked before any work
    lines = [r"\documentclass[10pt]{article}", r"\usepackage{amsmath}", r"\usepackage{amssymb}",
             r"\allowdisplaybreaks", r"\setlength{\parindent}{0pt}", r"\begin{document}",
             r"\section*{Statements checked by fltheory}"]
    for p in papers:
        lines.append(f"\\subsection*{{{_tex_text(paper_title(p))}}}")
        for st in statements[p]:
            tag = st.status if st.status == "printed" else f"corrected: {st.reason}"
            head = f"{p}.{st.name}" + (f" {st.equation}" if st.equation else "")
            lines.append(f"\\paragraph{{{_tex_text(head)}}} {_tex_text(st.title or '')} ({_tex_text(tag)})")
            lines += [r"{\small", r"\begin{equation*}", st.latex(), r"\end{equation*}}", ""]
    lines.append(r"\end{document}")
    return "\n".join(lines) + "\n"


def _cmd_bounds(args) -> int:
    papers = args.paper or list(_verify.PAPERS)
    for p in papers:
        print(f"== {p}")
        for st in paper_statements(p):
            print(f"- {p}.{st.name}: {st.describe()}")
            if args.latex:
                print(f"    {st.latex()}")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(latex_document(papers))
        print(f"LaTeX document written to {args.out} (pdflatex {args.out.name})")
    return 0


def _cmd_figures(args) -> int:
    """Exact figures on built-in instances (seconds; no simulation)."""
    import numpy as np  # noqa: PLC0415

    try:
        import matplotlib  # noqa: F401, PLC0415 - an optional extra
    except ImportError:
        print("fltheory figures: no figure drawn: matplotlib is not installed (pip install 'fltheory[plot]')",
              file=sys.stderr)
        return 1
    from . import plotting, problems  # noqa: PLC0415
    from .papers.feddelavg import exact as fd_exact  # noqa: PLC0415
    from .papers.local_adaptivity import exact as la_exact  # noqa: PLC0415
    from .validation import per_client  # noqa: PLC0415

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
                      ("tau = (1, 5, 10), uncorrected", dict(tau=per_client([1, 5, 10]))),
                      ("tau = (1, 5, 10) + local correction", dict(tau=per_client([1, 5, 10]), correction="local"))]:
        x = la_exact.fixed_point(fed, eta=etas[:, None], **kw).x
        curves[label] = np.linalg.norm(x - fed.x_star, axis=-1)
    path = out / "local_adaptivity_bias_vs_eta.png"
    plotting.bias_vs_eta_figure(etas, curves, path, title="Local adaptivity: bias of FedOpt's limit point against "
                                "the client learning rate (three-client example)")
    print(f"wrote {path}")
    # FedDelAvg: which alpha, against Delta, on a quadratic instance
    q = problems.random_quadratic_federation(M=10, d=4, kappa=10, weights="dirichlet", seed=0)
    tau = 10
    for eb in (0.02, 0.5):
        cmp = fd_exact.alpha_comparison(q, eta=eb / float(q.L), tau=tau, Deltas=np.arange(tau + 1))
        path = out / f"feddelavg_alpha_vs_delta_etabeta{eb}.png"
        plotting.alpha_vs_delta_figure(cmp, path=path, title=rf"FedDelAvg: the best weight $\alpha$ against the delay "
                                       rf"$\Delta$ ($\eta\beta={eb}$, $\tau={tau}$, M=10 clients, d=4)")
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
    v.add_argument("--no-figures", action="store_true", help="write report.md and report.json only")
    v.set_defaults(func=_cmd_verify)
    b = sub.add_parser("bounds", help="list every statement by name (with --latex, its LaTeX)")
    b.add_argument("--paper", action="append", choices=_verify.PAPERS)
    b.add_argument("--latex", action="store_true", help="print each statement's LaTeX under it")
    b.add_argument("--out", type=Path, default=None, metavar="FILE.tex",
                   help="also write a LaTeX document of the statements that compiles with pdflatex")
    b.set_defaults(func=_cmd_bounds)
    f = sub.add_parser("figures", help="draw the exact figures of each paper on built-in instances")
    f.add_argument("--out", type=Path, default=Path("fltheory-figures"))
    f.set_defaults(func=_cmd_figures)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
