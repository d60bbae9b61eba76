"""Figures: statements against the quantities they bound, bias against eta, sweeps.

matplotlib is an optional extra (``pip install 'fltheory[plot]'``); it is imported here only.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["verdict_figure", "loglog_slope", "bias_vs_eta_figure", "alpha_vs_delta_figure"]

_COLORS = {"holds": "tab:green", "tight": "tab:blue", "violated": "tab:red"}


def _plt():
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def _few_log_ticks(ax, axes="xy"):
    """Log axes spanning hundreds of decades make matplotlib build thousands of ticks: keep four."""
    from matplotlib.ticker import LogLocator, NullLocator  # noqa: PLC0415

    for name in axes:
        axis = ax.xaxis if name == "x" else ax.yaxis
        axis.set_major_locator(LogLocator(numticks=4))
        axis.set_minor_locator(NullLocator())


def verdict_figure(verdicts, path: str | Path):
    """One panel per check: computed value against the statement's value, with the line y = x."""
    plt = _plt()
    vs = [v for v in verdicts if v.values]
    n = max(len(vs), 1)
    cols = min(4, n)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.0 * rows), squeeze=False)
    for ax in axes.ravel()[len(vs):]:
        ax.axis("off")
    for ax, v in zip(axes.ravel(), vs):
        if v.relation == "==":  # identities: the error of each instance, against the tolerance
            err = np.abs(np.asarray(v.values) - np.asarray(v.bounds))
            ax.semilogy(np.arange(err.size), np.maximum(err, 1e-300), ".", ms=3, color=_COLORS[v.status])
            _few_log_ticks(ax, "y")
            ax.set_title(f"{v.check.split('.', 1)[-1][:34]}\n{v.status} (err/tol {v.worst_ratio:.3g})", fontsize=7)
            ax.set_xlabel("instance", fontsize=7)
            ax.set_ylabel("|computed - closed form|", fontsize=7)
            ax.tick_params(labelsize=6)
            continue
        x, y = np.abs(np.asarray(v.bounds)), np.abs(np.asarray(v.values))
        ax.scatter(x, y, s=6, color=_COLORS[v.status])
        pos = np.concatenate([x[x > 0], y[y > 0]])
        if pos.size:
            lo, hi = pos.min(), pos.max()
            ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
            ax.set_xscale("log")
            ax.set_yscale("log")
            _few_log_ticks(ax)
        ax.set_title(f"{v.check.split('.', 1)[-1][:34]}\n{v.status} ({v.worst_ratio:.3g})", fontsize=7)
        ax.set_xlabel("statement", fontsize=7)
        ax.set_ylabel("computed", fontsize=7)
        ax.tick_params(labelsize=6)
    fig.subplots_adjust(left=0.06, right=0.98, top=1 - 0.5 / rows / 3.0, bottom=0.35 / rows, hspace=0.75, wspace=0.45)
    fig.savefig(path, dpi=100)  # no tight_layout: it costs ~10 s for 60 log-scale panels
    plt.close(fig)
    return path


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x (both positive, the same length >= 2)."""
    from .validation import InputError, array  # noqa: PLC0415

    x = array(x, "x", xp=np, ndim=1, low=0.0, open_low=True)
    y = array(y, "y", xp=np, ndim=1, low=0.0, open_low=True)
    if x.shape != y.shape or x.size < 2:
        raise InputError(f"x and y must have the same length >= 2; got {x.shape} and {y.shape}")
    lx, ly = np.log(x), np.log(y)
    return float(np.polyfit(lx, ly, 1)[0])


def bias_vs_eta_figure(etas, curves: dict, path: str | Path | None = None, ax=None, title: str = ""):
    """Bias against eta on log axes, one curve per label, with fitted slopes in the legend."""
    plt = _plt()
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(5.5, 4.0))
    for label, ys in curves.items():
        ys = np.asarray(ys, float)
        ax.loglog(etas, ys, "o-", ms=3, label=f"{label} (slope {loglog_slope(etas, ys):.2f})")
    ax.set_xlabel(r"client learning rate $\eta$")
    ax.set_ylabel(r"$\|x_\infty - x^*\|$")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=7)
    if own and path is not None:
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
    return ax


def alpha_vs_delta_figure(comparison, *, curves: dict | None = None, empirical=None, path: str | Path | None = None,
                          ax=None, title: str = ""):
    """FedDelAvg: which alpha?  The bound-optimal alpha* against the exactly gap- and rate-optimal
    alpha of a quadratic instance (``feddelavg.exact.alpha_comparison``), as functions of Delta.

    ``curves``: extra ``{label: alpha per Delta}`` (e.g. alpha* with other constants);
    ``empirical``: ``(Deltas, alphas)`` of an empirical sweep, drawn as black diamonds.
    """
    plt = _plt()
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(7, 4.2))
    D = np.asarray(comparison.Delta)
    flat = lambda a: np.asarray(a, float).reshape(D.size, -1)[:, 0]  # noqa: E731 - first configuration
    if comparison.alpha_bound is not None:
        ax.plot(D, flat(comparison.alpha_bound), "s--", label=r"bound-optimal $\alpha^*$ (instance constants)")
    for label, ys in (curves or {}).items():
        ax.plot(D, np.asarray(ys, float), "o:", label=label)
    ax.plot(D, flat(comparison.alpha_gap), "^-", label="exact: min asymptotic gap")
    ax.plot(D, flat(comparison.alpha_rate), "v-", label="exact: min spectral radius")
    if empirical is not None:
        ax.plot(*empirical, "D", ms=9, color="k", label="empirical best")
    ax.set_xlabel(r"delay $\Delta$ (iterations)")
    ax.set_ylabel(r"$\alpha$")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    if own and path is not None:
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
    return ax
