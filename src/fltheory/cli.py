"""The ``fltheory`` command: ``verify`` runs every registered check and writes the report; ``bounds``
lists every statement by name (``--latex`` prints its LaTeX, ``--out FILE.tex`` writes a document
that compiles); ``figures`` draws the exact figures of each paper.

No command writes through a symbolic link, or over a file or folder it did not write, unless
``--force`` is given; the output path is checked before any work, and a bad one is one line on
stderr (``fltheory <command>: ...``) and exit status 2."""
from __future__ import annotations

import argparse
import os
import re
import signal
import sys
from pathlib import Path

from . import verify as _verify
from .validation import InputError, InputTypeError, shown

MARKER = _verify.MARKER  # the file an output folder of fltheory holds: its first line names the command


class PathRefused(Exception):
    """An output path the command will not write (a symlink, a file it did not create, ...): one line, exit 2."""


def _marked(folder: Path, command: str) -> bool:
    """Whether ``folder`` holds the marker an earlier ``fltheory <command>`` wrote (a plain file, not a link)."""
    marker = folder / MARKER
    if marker.is_symlink() or not marker.is_file():
        return False
    try:
        with open(marker, encoding="utf-8", errors="replace") as fh:
            return fh.readline().strip() == f"fltheory {command}"
    except OSError:
        return False


def _writable_parent(path: Path) -> None:
    """The nearest existing folder above ``path`` is a folder we may write into (a missing one is created)."""
    for parent in path.absolute().parents:
        if parent.is_symlink() and not parent.exists():
            raise PathRefused(f"{parent} is a dangling symbolic link")
        if parent.exists():
            if not parent.is_dir():
                raise PathRefused(f"{path} is under {parent}, which is a regular file, not a folder")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise PathRefused(f"cannot write into {parent} (permission denied)")
            return
    raise PathRefused(f"{path}: no existing folder above it")  # pragma: no cover - the root always exists


def check_out_file(path: Path, *, force: bool) -> Path:
    """Refuse, before any work, an output file that is a symlink, a folder, under a file, or (without
    ``force``) an existing file; returns ``path``."""
    if path.is_symlink():
        raise PathRefused(f"{path} is a symbolic link; fltheory never writes through one (remove it or choose "
                          f"another path)")
    if path.exists():
        if path.is_dir():
            raise PathRefused(f"{path} is a folder; --out takes a file name such as statements.tex")
        if not path.is_file():
            raise PathRefused(f"{path} exists and is not a regular file")
        if not force:
            raise PathRefused(f"{path} exists; give --force to overwrite it")
        if not os.access(path, os.W_OK):
            raise PathRefused(f"cannot write {path} (permission denied)")
    _writable_parent(path)
    return path


def check_out_folder(path: Path, command: str, files=(), *, force: bool) -> Path:
    """Refuse, before any work, an output folder that is a symlink or not a folder, holds a symlink where a
    file will be written, or (without ``force``) is a non-empty folder an earlier ``fltheory <command>`` did
    not write (it holds no marker); returns ``path``."""
    if path.is_symlink():
        raise PathRefused(f"{path} is a symbolic link; fltheory never writes through one (remove it or choose "
                          f"another path)")
    if not path.exists():
        _writable_parent(path)
        return path
    if not path.is_dir():
        raise PathRefused(f"{path} exists and is not a folder; --out takes a folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise PathRefused(f"cannot write into {path} (permission denied)")
    for name in (MARKER, *files):
        target = path / name
        if target.is_symlink():
            raise PathRefused(f"{target} is a symbolic link; fltheory never writes through one")
        if target.exists() and not (target.is_file() or (target.is_dir() and name == "figures")):
            raise PathRefused(f"{target} exists and is not a regular file")
    if (path / "figures").is_dir():
        for inner in (path / "figures").iterdir():
            if inner.is_symlink():
                raise PathRefused(f"{inner} is a symbolic link; fltheory never writes through one")
    if not force and any(path.iterdir()) and not _marked(path, command):
        raise PathRefused(f"{path} exists and is not an earlier 'fltheory {command}' output (it has no {MARKER} "
                          f"file); give --force to write into it, or choose a new folder")
    return path


def _write_new(path: Path, text: str, *, force: bool) -> None:
    """Write ``text`` to ``path`` without following a symlink; without ``force`` only as a new file."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | (os.O_TRUNC if force else os.O_EXCL)
    fd = os.open(path, flags, 0o666)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


_REPORT_FILES = ("report.md", "report.json", "figures")


def _jobs(text: str) -> int:
    """``--jobs``: a whole number from 0 (one worker per usable CPU) to 1024."""
    import argparse  # noqa: PLC0415

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of worker processes (0: one per CPU); got {text!r}")
    if not 0 <= n <= 1024:
        raise argparse.ArgumentTypeError(f"must be between 0 (one per CPU) and 1024; got {n}")
    return n


def _cmd_verify(args) -> int:
    papers = args.paper or None
    if args.only is not None and not args.only.strip():
        print(f"fltheory verify: --only must name part of a check name (feddelavg.theorem1, say); got "
              f"{args.only!r}, which would match every check", file=sys.stderr)
        return 2
    check_out_folder(args.out, "verify", _REPORT_FILES, force=args.force)   # before any check runs
    try:
        report = _verify.run(papers, quick=args.quick, seed=args.seed, progress=not args.no_progress, only=args.only,
                             search=args.search, jobs=args.jobs, backend=args.backend)
    except InputError as err:  # e.g. --only matching no check: an error, never an empty "all as expected"
        print(f"fltheory verify: {err}", file=sys.stderr)
        return 2
    print(report.table())
    check_out_folder(args.out, "verify", _REPORT_FILES, force=args.force)   # again: nothing changed meanwhile
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


# the document's preamble: T1 font encoding (so that < > | in text are those characters), Latin Modern where it is
# installed, and \fltline, one line of a long formula that is shrunk only where it is wider than the line
_PREAMBLE = r"""\documentclass[10pt]{article}
\usepackage[T1]{fontenc}
\IfFileExists{lmodern.sty}{\usepackage{lmodern}}{}
\usepackage{amsmath}
\usepackage{amssymb}
\usepackage{graphicx}
\setlength{\parindent}{0pt}
\newsavebox{\fltbox}
\newlength{\fltwidth}
\newcommand{\fltline}[2]{\par\noindent\hspace*{#1}\setlength{\fltwidth}{\dimexpr\linewidth-#1\relax}%
  \sbox{\fltbox}{$\displaystyle #2$}%
  \ifdim\wd\fltbox>\fltwidth\resizebox{\fltwidth}{!}{\usebox{\fltbox}}\else\usebox{\fltbox}\fi\par}"""

LINE_UNITS = 56   # about what one line of the document holds, in the units of _tex_width


def _tex_width(tex: str) -> int:
    """A rough width of a LaTeX formula: a command counts as one character, layout commands and braces as none."""
    tex = re.sub(r"\\(left|right|big|Big|bigl|bigr|Bigl|Bigr|frac|tfrac|dfrac|mathcal|mathbb|mathrm|text|quad)"
                 r"(?![A-Za-z])", "", tex)
    tex = re.sub(r"\\[A-Za-z]+", "x", tex)
    return len(re.sub(r"[{}_^\s]|\\[,;:! ]", "", tex))


def _top_level_pieces(tex: str) -> list[str]:
    r"""``tex`` cut before each binary ``+``/``-`` and each relation outside braces and ``\left...\right``
    groups (each piece keeps its operator), so that every piece balances its braces and delimiters."""
    pieces, start, depth, i = [], 0, 0, 0
    rel = re.compile(r" (\+|-|=|<|>|\\le|\\ge|\\leq|\\geq|\\ne|\\neq|\\approx|\\in) ")
    while i < len(tex):
        if tex.startswith("\\begin{", i) or tex.startswith("\\end{", i):   # an environment (cases): a group
            depth += 1 if tex[i + 1] == "b" else -1
            i = tex.index("}", i) + 1
            continue
        if tex.startswith("\\left", i) and not tex[i + 5: i + 6].isalpha():
            depth, i = depth + 1, i + 5
            continue
        if tex.startswith("\\right", i) and not tex[i + 6: i + 7].isalpha():
            depth, i = depth - 1, i + 6
            continue
        ch = tex[i]
        if ch == "\\":                      # an escaped character or a command: step over its name
            i += 2
            while i < len(tex) and tex[i].isalpha():
                i += 1
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        m = rel.match(tex, i) if depth == 0 and ch == " " else None
        if m and i > start:
            pieces.append(tex[start:i].strip())
            start = i + 1
            i = m.end()
            continue
        i += 1
    pieces.append(tex[start:].strip())
    return [q for q in pieces if q]


def _packed(pieces: list[str], units: int) -> list[str]:
    """Pieces joined into lines of at most about ``units`` (a piece wider than that is a line of its own)."""
    lines: list[str] = []
    for piece in pieces:
        if lines and _tex_width(lines[-1]) + _tex_width(piece) <= units:
            lines[-1] += " " + piece
        else:
            lines.append(piece)
    return lines


def _formula_lines(st) -> list[str]:
    r"""A statement as ``\fltline`` lines: the formula cut at its top-level sums and relations, then
    ``if`` and its conditions, a few to a line; a continuation line is indented."""
    out = []
    for k, line in enumerate(_packed(_top_level_pieces(st.latex(conditions=False)), LINE_UNITS)):
        out.append(f"\\fltline{{{'2em' if k else '0pt'}}}{{{line}}}")
    conditions = st.latex_conditions()
    if conditions:
        items = [c + ("," if k < len(conditions) - 1 else "") for k, c in enumerate(conditions)]
        for k, line in enumerate(_packed(items, LINE_UNITS - 4)):
            out.append(f"\\fltline{{{'2em' if k else '0pt'}}}{{{'' if k else chr(92) + 'text{if } '}{line}}}")
    return out


def latex_document(papers=None) -> str:
    """A LaTeX document listing every statement of ``papers``: its name, equation number, title, whether
    it is printed or corrected, and its formula with conditions.

    The document uses the T1 font encoding and needs only the packages of a basic TeX installation
    (amsmath, amssymb, graphicx; Latin Modern where installed).  Long formulas are cut at their top-level
    sums and relations and the conditions set a few to a line; a piece still wider than the line is
    shrunk to fit it, so that ``pdflatex`` reports no overfull line (the test suite compiles it).  Each
    statement's formula is also written whole, on one line, in a comment above it, to copy.
    """
    from .plotting import paper_title  # noqa: PLC0415 - only reads the package docstring (no matplotlib)

    if papers is not None and (isinstance(papers, (str, bytes)) or not hasattr(papers, "__iter__")):
        raise InputTypeError(f"papers must be a list of paper names or None; got {shown(papers)}")
    papers = list(papers or _verify.PAPERS)
    statements = {p: paper_statements(p) for p in papers}  # every name checked before any work
    lines = [_PREAMBLE, r"\begin{document}", r"\raggedright", r"\section*{Statements checked by fltheory}"]
    for p in papers:
        lines.append(f"\\subsection*{{{_tex_text(paper_title(p))}}}")
        for st in statements[p]:
            tag = st.status if st.status == "printed" else f"corrected: {st.reason}"
            head = f"{p}.{st.name}" + (f" {st.equation}" if st.equation else "")
            lines.append(f"\\paragraph{{{_tex_text(head)}}} {_tex_text(st.title or '')} ({_tex_text(tag)})")
            lines += ["% " + " ".join(st.latex().split()), r"{\small\smallskip", *_formula_lines(st),
                      r"\medskip}", ""]
    lines.append(r"\end{document}")
    return "\n".join(lines) + "\n"


def _cmd_bounds(args) -> int:
    papers = args.paper or list(_verify.PAPERS)
    if args.out is not None:
        check_out_file(args.out, force=args.force)   # before anything is printed
    if args.coverage:
        from . import claims  # noqa: PLC0415

        for p in papers:
            print(f"== {p}: numbered results and the checks of each")
            print(claims.coverage_table(p))
        return 0
    for p in papers:
        print(f"== {p}")
        for st in paper_statements(p):
            print(f"- {p}.{st.name}: {st.describe()}")
            if args.latex:
                print(f"    {st.latex()}")
    if args.out is not None:
        document = latex_document(papers)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        _write_new(args.out, document, force=args.force)
        print(f"LaTeX document written to {args.out} (pdflatex {args.out.name})")
    return 0


FIGURE_FILES = ("local_adaptivity_bias_vs_eta.png", "feddelavg_alpha_vs_delta_etabeta0.02.png",
                "feddelavg_alpha_vs_delta_etabeta0.5.png")


def _cmd_figures(args) -> int:
    """Exact figures on built-in instances (seconds; no simulation)."""
    import numpy as np  # noqa: PLC0415

    out = check_out_folder(args.out, "figures", FIGURE_FILES, force=args.force)   # before any figure is drawn
    try:
        import matplotlib  # noqa: F401, PLC0415 - a dependency, but an environment may lack it
    except ImportError:
        print("fltheory figures: no figure drawn: matplotlib is not installed (pip install matplotlib)",
              file=sys.stderr)
        return 1
    from . import plotting, problems  # noqa: PLC0415
    from .papers.feddelavg import exact as fd_exact  # noqa: PLC0415
    from .papers.local_adaptivity import exact as la_exact  # noqa: PLC0415
    from .validation import per_client  # noqa: PLC0415

    out.mkdir(parents=True, exist_ok=True)
    if not _marked(out, "figures"):
        _write_new(out / MARKER, "fltheory figures\n", force=True)
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


def plain_text(rst: str) -> str:
    """reStructuredText as the plain text a terminal shows (``--help``): inline literals and roles lose their
    markup (``x`` and :func:`f` read x and f)."""
    text = re.sub(r":[a-z]+(?::[a-z]+)?:`~?([^`]*)`", r"\1", rst)
    return re.sub(r"``([^`]*)``", r"\1", text).replace("**", "")


def main(argv=None) -> int:
    if hasattr(signal, "SIGPIPE"):  # `fltheory bounds | head` should end quietly
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    parser = argparse.ArgumentParser(prog="fltheory", description=plain_text(__doc__))
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="run every registered check and write a report")
    v.add_argument("--quick", action="store_true", help="fewer instances per check (a first look)")
    v.add_argument("--paper", action="append", choices=_verify.all_papers(),
                   help="restrict to a paper (repeatable; your own too, see verify.register_paper)")
    v.add_argument("--only", help="run only checks whose name contains this text")
    v.add_argument("--seed", type=int, default=0)
    v.add_argument("--search", choices=_verify.SEARCH_LEVELS, default=None,
                   help="the adversarial search's budget for the checks that have an instance family: quick, full "
                        "(the defaults with and without --quick) or deep (%dx the full budget, minutes)"
                        % _verify.DEEP_FACTOR)
    v.add_argument("--backend", choices=("numpy", "cupy", "array_api_strict"), default="numpy",
                   help="where the batched deep searches run (the checks that evaluate many instances at once); "
                        "cupy needs a GPU and the gpu extra")
    v.add_argument("--jobs", type=_jobs, default=0, metavar="N",
                   help="worker processes (default 0: one per usable CPU); the verdicts do not depend on it")
    v.add_argument("--out", type=Path, default=Path("fltheory-report"),
                   help="report folder (refused if it exists and is not an earlier report, unless --force)")
    v.add_argument("--force", action="store_true", help="write into an existing --out folder that is not an "
                   "earlier report")
    v.add_argument("--no-progress", action="store_true")
    v.add_argument("--no-figures", action="store_true", help="write report.md and report.json only")
    v.set_defaults(func=_cmd_verify)
    b = sub.add_parser("bounds", help="list every statement by name (with --latex, its LaTeX)")
    b.add_argument("--paper", action="append", choices=_verify.PAPERS)
    b.add_argument("--latex", action="store_true", help="print each statement's LaTeX under it")
    b.add_argument("--out", type=Path, default=None, metavar="FILE.tex",
                   help="also write a LaTeX document of the statements that compiles with pdflatex")
    b.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    b.add_argument("--coverage", action="store_true",
                   help="list each paper's numbered results and the checks that check each (instead of the statements)")
    b.set_defaults(func=_cmd_bounds)
    f = sub.add_parser("figures", help="draw the exact figures of each paper on built-in instances")
    f.add_argument("--out", type=Path, default=Path("fltheory-figures"),
                   help="figures folder (refused if it exists and is not an earlier one, unless --force)")
    f.add_argument("--force", action="store_true", help="write into an existing --out folder fltheory did not make")
    f.set_defaults(func=_cmd_figures)
    args = parser.parse_args(argv)
    try:
        from .parallel import num_threads  # noqa: PLC0415

        num_threads()   # a bad FLTHEORY_NUM_THREADS is named now, not in the middle of the work
        return args.func(args)
    except (PathRefused, InputError) as err:
        print(f"fltheory {args.command}: {_one_line(err)}", file=sys.stderr)
        return 2
    except OSError as err:   # the path changed under us, a full disk, ...: one line, never a traceback
        where = f"{err.filename}: " if err.filename else ""
        print(f"fltheory {args.command}: {where}{_one_line(err.strerror or err)}", file=sys.stderr)
        return 2


def _one_line(err) -> str:
    return " ".join(str(err).split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
