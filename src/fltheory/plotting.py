"""Figures: statements against the quantities they bound, bias against eta, sweeps, the best step size.

matplotlib is a dependency of the package; it is imported here only (on first use).  The helpers
build :class:`matplotlib.figure.Figure` objects directly, never through ``pyplot``: they leave the session's
backend and pyplot's list of open figures alone, write a file when given a ``path`` and otherwise return the
Figure, which a notebook shows when it is a cell's last value (or ``display(fig)``).
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from . import validation as V

__all__ = ["verdict_figure", "summary_figure", "verdict_figures", "paper_title", "loglog_slope", "bias_vs_eta_figure",
           "alpha_vs_delta_figure", "step_size_figure"]

_COLORS = {"holds": "tab:green", "tight": "tab:blue", "violated": "tab:red"}
_REL = {"<=": "\u2264", ">=": "\u2265", "==": "="}
RATIO_FLOOR = 1e-12  # ratios below it (exact zeros included) are drawn at the left edge, marked as such
RATIO_CEIL = 1e6  # ratios above it (infinite ones included) are drawn at the right edge, the worst one labelled


def _figure(figsize):
    """A new Figure and its Axes, outside pyplot (no backend is chosen or changed)."""
    from matplotlib.figure import Figure  # noqa: PLC0415

    fig = Figure(figsize=figsize)
    return fig, fig.subplots()


def paper_title(paper: str, width: int = 200, *, short: bool = False) -> str:
    """The paper's authors and title, as its package docstring opens, or the title given to
    ``verify.register_paper`` (the slug when there is none);
    ``short``: the quoted title alone."""
    import importlib  # noqa: PLC0415
    import re  # noqa: PLC0415

    from .verify import PAPERS, paper_title as _registered_title  # noqa: PLC0415

    doc = ""
    if paper in PAPERS:
        doc = importlib.import_module(f"fltheory.papers.{paper}").__doc__ or ""
    elif _registered_title(paper):   # a paper of the user's own (verify.register_paper)
        doc = _registered_title(paper)
    head = " ".join(doc.strip().split("\n\n", 1)[0].split())
    head = re.sub(r"^Paper\s+\d+\s*[-\u2014\u2013:]+\s*", "", head)  # no internal numbering
    if short:
        quoted = re.search(r'"([^"]+)"', head)
        head = quoted.group(1).rstrip(".") if quoted else head
    if not head:
        return paper
    return head if len(head) <= width else head[: width - 3].rstrip() + "..."


def _ratios(v) -> np.ndarray:
    """Per-instance ratios of a verdict (> 1 breaks the statement), for lower bounds, upper bounds and
    identities alike; recomputed from values and bounds for verdicts built without them."""
    if getattr(v, "ratios", None):
        return np.asarray(v.ratios, float)
    val, bnd = np.asarray(v.values, float), np.asarray(v.bounds, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if v.relation == "==":
            return np.abs(val - bnd) / np.maximum(np.abs(bnd) * 1e-9, 1e-300)
        small, big = (val, bnd) if v.relation == "<=" else (bnd, val)
        return np.where(big > 0, small / big, np.where(small <= 0, 0.0, np.inf))


def _label(v, width: int = 46) -> str:
    name = v.check.split(".", 1)[-1]  # unique, where two checks can share a statement
    eq = f" {v.equation}" if getattr(v, "equation", "") else ""
    text = f"{name}{eq}"
    if len(text) > width:
        text = text[: width - 3] + "..."
    return f"{text}  [{v.variant}, {_REL.get(v.relation, v.relation)}]"


def verdict_figure(verdicts, path: str | Path | None = None, *, title: str | None = None):
    """One paper's page: for every check, the ratio of each instance and the worst one.

    The ratio is value/bound for an upper bound, bound/value for a lower bound and
    ``|error|/tolerance`` for an identity, so that every row reads the same way round: a point right
    of the line ``ratio = 1`` breaks the statement.  Large markers are each check's worst
    instance, coloured by verdict (a black edge where the verdict is not the expected one);
    ratios below ``RATIO_FLOOR`` (exact zeros included) sit on the left edge as ``<``, those above
    ``RATIO_CEIL`` (non-finite ones included) on the right edge as ``>``, with the worst one's value
    written beside it.  The legend sits below the axes.  Returns ``path``, or the
    open figure when ``path`` is None.
    """
    from matplotlib.lines import Line2D  # noqa: PLC0415

    vs = [v for v in verdicts if len(getattr(v, "values", ())) or getattr(v, "ratios", None)]
    rows = [(v, _ratios(v)) for v in vs]
    finite = np.concatenate([r[np.isfinite(r) & (r >= RATIO_FLOOR)] for _, r in rows] + [np.array([1.0])])
    lo = max(RATIO_FLOOR, 10 ** np.floor(np.log10(finite.min())) / 3)
    hi = min(RATIO_CEIL, max(10.0, 10 ** np.ceil(np.log10(finite.max())) * 3))
    n = max(len(rows), 1)
    fig, ax = _figure((10, 1.9 + 0.27 * n))
    ax.axvspan(1.0, hi, color="tab:red", alpha=0.06, lw=0)
    ax.axvline(1.0, color="k", lw=1, ls="--")
    for i, (v, r) in enumerate(rows):
        y = n - 1 - i
        color = _COLORS.get(v.status, "k")
        fin = np.isfinite(r)
        low, mid, inf = fin & (r < lo), fin & (r >= lo) & (r <= hi), ~fin | (r > hi)
        jitter = (np.arange(r.size) % 5 - 2) * 0.06
        ax.scatter(r[mid], y + jitter[mid], s=7, color=color, alpha=0.35, lw=0)
        ax.scatter(np.full(low.sum(), lo), y + jitter[low], s=14, marker="<", color=color, alpha=0.5, lw=0)
        ax.scatter(np.full(inf.sum(), hi), y + jitter[inf], s=20, marker=">", color=color, alpha=0.8, lw=0)
        w = v.worst_ratio
        ax.scatter([min(max(w, lo), hi)], [y], s=60, color=color, edgecolors="k" if not v.ok else color,
                   linewidths=1.5 if not v.ok else 0.5, zorder=3)
        if not w <= hi:  # off the scale: say how far
            ax.annotate(f"{w:.3g}", (hi, y), xytext=(-9, 0), textcoords="offset points", ha="right", va="center",
                        fontsize=7, color=color)
    ax.set_xscale("log")
    ax.set_xlim(lo / 1.5, hi * 1.5)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_yticks(range(n))
    ax.set_yticklabels([_label(v) for v, _ in rows][::-1], fontsize=7)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel("ratio per instance: value/bound (\u2264), bound/value (\u2265), |error|/tolerance (=);"
                  "  right of 1 the statement fails", fontsize=8)
    ax.set_ylabel("check (equation) [variant, relation]", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    paper = vs[0].paper if vs else ""
    counts = {s: sum(v.status == s for v in vs) for s in _COLORS}
    n_ok = sum(v.ok for v in vs)
    head = "\n".join(textwrap.wrap(title if title is not None else paper_title(paper), 110))
    fig.suptitle(f"{head}\n{len(vs)} checks: {counts['holds']} hold, {counts['tight']} tight, "
                 f"{counts['violated']} violated; {n_ok}/{len(vs)} as expected", fontsize=9)
    handles = [Line2D([], [], ls="", marker="o", color=_COLORS[s], ms=7, label=f"worst instance: {s}") for s in _COLORS]
    handles += [Line2D([], [], ls="", marker="o", color="0.5", mfc="0.8", mec="k", mew=1.5, ms=7,
                       label="verdict not the expected one"),
                Line2D([], [], ls="", marker="o", color="0.5", alpha=0.4, ms=4, label="one instance"),
                Line2D([], [], ls="", marker="<", color="0.4", ms=5, label=f"ratio < {lo:.0e} (exact zeros included)"),
                Line2D([], [], ls="", marker=">", color="0.4", ms=5,
                       label=f"ratio > {hi:.0e} or infinite (value written)"),
                Line2D([], [], ls="--", color="k", label="ratio = 1: the statement's boundary")]
    inch = 1.9 + 0.27 * n
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=7, frameon=False)
    fig.subplots_adjust(left=0.36, right=0.98, top=1 - (0.35 + 0.16 * head.count("\n")) / inch - 0.3 / inch,
                        bottom=1.05 / inch)
    return _finish(fig, path)


def _finish(fig, path, **savefig):
    if path is None:
        return fig
    fig.savefig(path, dpi=100, **savefig)
    return path


def summary_figure(verdicts, path: str | Path | None = None):
    """Every paper at a glance: how many of its checks hold, are tight or are violated, and how many
    verdicts differ from the expected one.  Returns ``path``, or the open figure when it is None."""
    papers = list(dict.fromkeys(v.paper for v in verdicts))
    fig, ax = _figure((10, 1.4 + 0.45 * max(len(papers), 1)))
    left = np.zeros(len(papers))
    for status in _COLORS:
        k = np.array([sum(v.paper == p and v.status == status for v in verdicts) for p in papers], float)
        ax.barh(np.arange(len(papers)), k, left=left, color=_COLORS[status], label=status)
        left += k
    for i, p in enumerate(papers):
        mine = [v for v in verdicts if v.paper == p]
        bad = sum(not v.ok for v in mine)
        ax.text(left[i] + 0.5, i, f"{len(mine) - bad}/{len(mine)} as expected" + (f"  ({bad} NOT)" if bad else ""),
                va="center", fontsize=8, color="tab:red" if bad else "k")
    ax.set_yticks(np.arange(len(papers)))
    ax.set_yticklabels(["\n".join(textwrap.wrap(paper_title(p, short=True), 42)) for p in papers], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, max(left.max(initial=1) * 1.35, 1))
    ax.set_xlabel("number of checks (statements against exact or simulated values)", fontsize=8)
    ax.set_ylabel("paper", fontsize=8)
    n_ok = sum(v.ok for v in verdicts)
    ax.set_title(f"Every statement checked: {n_ok}/{len(verdicts)} verdicts as expected", fontsize=9)
    ax.legend(title="verdict", loc="lower center", bbox_to_anchor=(0.5, 1.12), ncol=3, fontsize=7,
              title_fontsize=7, frameon=False)
    return _finish(fig, path, bbox_inches="tight")


def verdict_figures(verdicts, folder: str | Path) -> list:
    """The summary (``verdicts.png``) and one page per paper (``verdicts_<paper>.png``) in ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [summary_figure(verdicts, folder / "verdicts.png")]
    for paper in dict.fromkeys(v.paper for v in verdicts):
        mine = [v for v in verdicts if v.paper == paper]
        paths.append(verdict_figure(mine, folder / f"verdicts_{paper}.png"))
    return paths


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x (both positive, the same length >= 2)."""
    from .validation import InputError, array  # noqa: PLC0415

    x = array(x, "x", xp=np, ndim=1, low=0.0, open_low=True)
    y = array(y, "y", xp=np, ndim=1, low=0.0, open_low=True)
    if x.shape != y.shape or x.size < 2:
        raise InputError(f"x and y must have the same length >= 2; got {x.shape} and {y.shape}")
    lx, ly = np.log(x), np.log(y)
    return float(np.polyfit(lx, ly, 1)[0])


def _check_ax(ax, *methods):
    """``ax`` is None (a new figure) or a Matplotlib Axes (anything with the methods the figure calls)."""
    missing = [m for m in methods if not hasattr(ax, m)]
    if ax is not None and missing:
        raise V.InputTypeError(f"ax must be a Matplotlib Axes (or None for a new figure); got {V.shown(ax)} "
                               f"without {missing}")


def bias_vs_eta_figure(etas, curves: dict, path: str | Path | None = None, ax=None, title: str = ""):
    """Bias against eta on log axes, one curve per label, with fitted slopes in the legend.  Draws on ``ax`` when
    given, else on a new Figure; returns ``path`` when given, else the Figure."""
    V.instance(curves, "curves", dict, "dict {label: bias per eta}")
    _check_ax(ax, "loglog", "set_xlabel", "set_ylabel")
    own = ax is None
    if own:
        fig, ax = _figure((5.5, 4.0))
    for label, ys in curves.items():
        ys = np.asarray(ys, float)
        ax.loglog(etas, ys, "o-", ms=3, label=f"{label} (slope {loglog_slope(etas, ys):.2f})")
    ax.set_xlabel(r"client learning rate $\eta$")
    ax.set_ylabel(r"bias of the limit point, $\|x_\infty - x^*\|$")
    if title:
        ax.set_title(title, fontsize=9)
    _legend(ax, own)
    if path is not None:
        ax.figure.savefig(path, dpi=110, bbox_inches="tight")
        return path
    return ax.figure


def _legend(ax, own: bool, **kw):
    """A legend that hides no data: below the axes on a figure of our own, else where the data is not."""
    if own:
        return ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize=7, frameon=False, **kw)
    return ax.legend(loc="best", fontsize=7, **kw)


def alpha_vs_delta_figure(comparison, *, curves: dict | None = None, empirical=None, path: str | Path | None = None,
                          ax=None, title: str = ""):
    """FedDelAvg: which alpha?  The bound-optimal alpha* against the exactly gap- and rate-optimal
    alpha of a quadratic instance (``feddelavg.exact.alpha_comparison``), as functions of Delta.

    ``curves``: extra ``{label: alpha per Delta}`` (e.g. alpha* with other constants);
    ``empirical``: ``(Deltas, alphas)`` of an empirical sweep, drawn as black diamonds.  Draws on ``ax`` when
    given, else on a new Figure; returns ``path`` when given, else the Figure.
    """
    missing = [a for a in ("Delta", "alpha_bound", "alpha_gap", "alpha_rate") if not hasattr(comparison, a)]
    if missing:
        raise V.InputTypeError(f"comparison must be the result of feddelavg.exact.alpha_comparison (with Delta, "
                               f"alpha_bound, alpha_gap, alpha_rate); got {V.shown(comparison)} without {missing}")
    if curves is not None:
        V.instance(curves, "curves", dict, "dict {label: alpha per Delta}")
    _check_ax(ax, "plot", "set_xlabel", "set_ylabel")
    own = ax is None
    if own:
        fig, ax = _figure((7, 4.2))
    D = np.asarray(comparison.Delta)
    flat = lambda a: np.asarray(a, float).reshape(D.size, -1)[:, 0]  # noqa: E731 - first configuration
    if comparison.alpha_bound is not None:
        ax.plot(D, flat(comparison.alpha_bound), "s--", label=r"bound-optimal $\alpha^*$ (instance constants)")
    for label, ys in (curves or {}).items():
        ax.plot(D, np.asarray(ys, float), "o:", label=label)
    # thick and pale under thin and dark: where the two exact optima coincide, both lines show
    ax.plot(D, flat(comparison.alpha_gap), "^-", lw=4, ms=10, alpha=0.45, label="exact: min asymptotic gap")
    ax.plot(D, flat(comparison.alpha_rate), "v-", lw=1.2, ms=5, label="exact: min spectral radius")
    if empirical is not None:
        ax.plot(*empirical, "D", ms=9, color="k", label="empirical best")
    ax.set_xlabel(r"delay $\Delta$ (iterations)")
    ax.set_ylabel(r"weight $\alpha$ of the delayed global model")
    ax.set_ylim(0, 1.05)
    _legend(ax, own)
    if title:
        ax.set_title(title, fontsize=9)
    if path is not None:
        ax.figure.savefig(path, dpi=110, bbox_inches="tight")
        return path
    return ax.figure


def step_size_figure(comparison, *, path: str | Path | None = None, ax=None, title: str = ""):
    """The exact error against the step size on log axes (a :class:`fltheory.tuning.StepSizeComparison`'s
    ``curve``), with the exactly best value and the theorem's prescribed one marked (their errors in the legend;
    for several tuned parameters the curve is the first one's at the others' prescribed values).  Draws on
    ``ax`` when given, else on a new Figure; returns ``path`` when given, else the Figure."""
    from .tuning import StepSizeComparison  # noqa: PLC0415

    V.instance(comparison, "comparison", StepSizeComparison)
    _check_ax(ax, "loglog", "set_xlabel", "set_ylabel")
    own = ax is None
    if own:
        fig, ax = _figure((5.5, 4.0))
    c, name = comparison.curve, comparison.curve["parameter"]
    xs, ys = np.asarray(c["values"], float), np.asarray(c["errors"], float)
    ok = np.isfinite(ys) & (ys > 0)
    ax.loglog(xs[ok], ys[ok], "-", color="0.3", label="exact error" + ("" if len(comparison.names) == 1 else
                                                                        " (others prescribed)"))
    ax.loglog([comparison.best[name]], [comparison.best_error], "o", ms=8, color="tab:green",
              label=f"best: {name} = {comparison.best[name]:.3g}, error {comparison.best_error:.3g}")
    ax.loglog([comparison.prescribed[name]], [comparison.prescribed_error], "s", ms=8, color="tab:red",
              label=f"theorem: {name} = {comparison.prescribed[name]:.3g}, error {comparison.prescribed_error:.3g} "
                    f"(ratio {comparison.ratio:.3g})")
    ax.set_xlabel(f"step size {name}")
    ax.set_ylabel(comparison.error, fontsize=8)
    if title:
        ax.set_title(title, fontsize=9)
    _legend(ax, own)
    if path is not None:
        ax.figure.savefig(path, dpi=110, bbox_inches="tight")
        return path
    return ax.figure
