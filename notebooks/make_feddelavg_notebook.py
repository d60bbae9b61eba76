"""Generate notebooks/feddelavg.ipynb (run: python notebooks/make_feddelavg_notebook.py).

The notebook reproduces, offline and qualitatively, the alpha sweep of Lin, Brinton and Michelusi on scikit-learn's 8x8 digits, and puts the paper's bound-optimal
alpha* beside the exactly optimal alpha of a quadratic instance and the empirically best alpha.
"""
from pathlib import Path

from nbgen import NotebookBuilder

nb = NotebookBuilder()
md, code = nb.md, nb.code


md(r"""
# FedDelAvg: the weight $\alpha$ under communication delay

FedDelAvg (Lin, Brinton, Michelusi) lets every device keep training while the global model
travels: at the sync time $t=k\tau$ the device mixes its local step with the global model
$\mathbf w(k\tau-\Delta)$, which is $\Delta$ iterations old, using the weight $\alpha$
(eq. (10)). The paper's experiment (MNIST, $N=10$, $\tau=10$, $\Delta=9$, full-batch GD,
$\eta=0.02$, $K=100$) reports that $\alpha=0.2$ is the best weight. It also reports that
$\alpha=0.2$ reaches about 80% accuracy in 78% fewer iterations than FedAvg ($\alpha=1$) under the
same delay.

MNIST cannot be downloaded here, and the paper's writer partition does not exist for MNIST
. This notebook therefore runs the same experiment on scikit-learn's bundled 8x8 digits.
The data are split non-iid by label (each device holds mostly two digits) and the model is the
same multinomial logistic regression, with a small L2 term so that $\mathbf w^*$ exists.
Only qualitative claims carry over; every number below is computed here.
""")

code(r"""
import time
import numpy as np
import matplotlib.pyplot as plt
import os
from pathlib import Path

import fltheory as flt
from fltheory.datasets import digits_federation
from fltheory.papers.feddelavg import feddelavg, exact
from fltheory.plotting import alpha_vs_delta_figure

# figures go to $FLTHEORY_FIGURES (the test run points it at a temporary folder), else to figures/
FIG = Path(os.environ.get("FLTHEORY_FIGURES", "figures")); FIG.mkdir(parents=True, exist_ok=True)
t_start = time.time()
SPLITS = range(5)           # five label splits of the digits: a conclusion must survive all of them
tau, Delta, K = 10, 9, 100
eta = 0.02                  # the paper's learning rate
data = digits_federation(n_clients=10, partition="label", seed=0)
fed = data.fed
print(f"clients: {fed.M}, sizes {fed.sizes.tolist()}, distinct labels per client {data.labels_per_client.tolist()}")
print(f"L = {float(fed.L):.3g}, beta = {float(fed.beta):.3g}, eta*beta = {eta * float(fed.beta):.3g}")
""")

md(r"""
## The $\alpha$ sweep at $\Delta=9$ (Fig. 2), beside FedAvg at $\Delta=0$ (Fig. 3), over five splits

The experiment runs at the paper's rate $\eta=0.02$, on five different label splits of the digits
(split seeds 0-4). One split is one draw of the data partition, and which $\alpha$ wins can move
from one split to the next. So every number below is a median over the five splits, with its
spread, and only what holds across splits is concluded.

For each split, all configurations run in one batched call. They share the period ($\tau=10$) and
the horizon ($T=K\tau=1000$ local iterations); $\alpha$ and $\Delta$ vary per configuration. As in
the paper, accuracy is measured on the averaged model $\mathbf w(k\tau-\Delta)$: the test accuracy
of the candidates of eq. (13), after $k\tau$ local iterations.
""")

code(r"""
alphas = np.array([0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0])
cfg_alpha = np.concatenate([alphas, [1.0, 0.2]])
cfg_Delta = np.concatenate([np.full(alphas.size, Delta), [0, 0]])
labels = [f"alpha={a:g}, Delta={d}" for a, d in zip(cfg_alpha, cfg_Delta)]
t0 = time.time()
acc, loss = [], []
for split in SPLITS:
    d_s = data if split == 0 else digits_federation(n_clients=10, partition="label", seed=split)
    run = feddelavg(d_s.fed, eta=eta, tau=tau, Delta=cfg_Delta, alpha=cfg_alpha, K=K)
    run0 = run if split == 0 else run0
    acc.append(np.asarray(d_s.test_accuracy(run.w_periods)))   # (configs, K+1)
    loss.append(np.asarray(run.losses))                        # training loss F(w(k tau - Delta))
acc, loss = np.array(acc), np.array(loss)                      # (splits, configs, K+1)
iters = run.iterations
print(f"{len(SPLITS)} splits x {cfg_alpha.size} configurations x {K * tau} iterations in {time.time() - t0:.1f} s")
""")

code(r"""
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for j, lab in enumerate(labels):
    if cfg_alpha[j] not in (0.05, 0.2, 0.5, 1.0):
        continue
    style = "--" if cfg_Delta[j] == 0 else "-"
    for ax, curves in ((axes[0], acc[:, j]), (axes[1], loss[:, j])):
        med = np.median(curves, axis=0)
        line, = ax.plot(iters, med, style, lw=1.6, label=lab)
        ax.fill_between(iters, curves.min(axis=0), curves.max(axis=0), color=line.get_color(), alpha=0.12)
axes[1].set_yscale("log")
axes[0].set_ylim(0.5, 1.0); axes[0].set_ylabel("test accuracy of w(k tau - Delta)")
axes[1].set_ylabel("training loss F(w(k tau - Delta))")
for ax in axes:
    ax.set_xlabel("iterations t (local steps)")
axes[0].legend(fontsize=7)
fig.suptitle(f"digits, N=10, tau={tau}, eta={eta}: median over {len(SPLITS)} label splits (band: min-max)")
fig.tight_layout(); fig.savefig(FIG / "feddelavg_alpha_sweep.png", dpi=110); plt.show()
""")

md(r"""
### Iterations to a target, per split

"Iterations" counts local steps: the smallest $k\tau$ at which the averaged model reaches the
target. The targets are the paper's 80% test accuracy, 90% test accuracy, and a training-loss
target: the loss that FedAvg without delay ($\alpha=1$, $\Delta=0$) reaches at $t=200$ on the same
split. The loss target is less jumpy than accuracy. The table shows the median over splits and
the range [min, max]; "never" means not within $T=1000$.
""")

code(r"""
def first_hit(curve, ok):
    hit = np.flatnonzero(ok(curve))
    return float(iters[hit[0]]) if hit.size else np.inf

bench = cfg_alpha.size - 2                                   # FedAvg, Delta = 0 (the paper's benchmark)
targets = {"acc>=0.80": lambda s: (acc[s], lambda c: c >= 0.80),
           "acc>=0.90": lambda s: (acc[s], lambda c: c >= 0.90),
           "F<=F_FedAvg(200)": lambda s: (loss[s], lambda c, f=loss[s, bench, 20]: c <= f)}
hits = {name: np.array([[first_hit(curves[j], ok) for j in range(cfg_alpha.size)]
                        for curves, ok in (t(s) for s in range(len(SPLITS)))])     # (splits, configs)
        for name, t in targets.items()}

def cell(v):
    fmt = lambda x: "never" if not np.isfinite(x) else f"{x:.0f}"  # noqa: E731
    return f"{fmt(np.median(v))} [{fmt(v.min())}, {fmt(v.max())}]"

print(f"{'configuration':22s}" + "".join(f"{n:>24s}" for n in hits))
for j, lab in enumerate(labels):
    print(f"{lab:22s}" + "".join(f"{cell(h[:, j]):>24s}" for h in hits.values()))
first = iters[1]
print(f"\nThe paper's 80% target: reached at the first checkpoint (t = {first:.0f}) by "
      f"{int((hits['acc>=0.80'][:, :alphas.size] == first).sum())} of {len(SPLITS) * alphas.size} (split, alpha) runs at "
      f"Delta = {Delta}; median iterations per alpha {np.median(hits['acc>=0.80'][:, :alphas.size], axis=0).tolist()}. "
      "On this easy data set it separates the weights much less than on MNIST.")
""")

md(r"""
### Which $\alpha$ is best, and what survives the change of split

For each split and target, the winner is the grid $\alpha$ (at $\Delta=9$) with the fewest
iterations, with ties going to the smaller final training loss. The paper's claims are then
checked one by one against all five splits, and the cell prints which of them hold.
""")

code(r"""
sweep = slice(0, alphas.size)
i02, i1 = list(alphas).index(0.2), list(alphas).index(1.0)
winners = {}
for name, h in hits.items():
    wins = []
    for s in range(len(SPLITS)):
        order = np.lexsort((loss[s, sweep, -1], h[s, sweep]))
        wins.append(alphas[order[0]])
    counts = {float(a): int(np.sum(np.isclose(wins, a))) for a in alphas if np.any(np.isclose(wins, a))}
    winners[name] = counts
    med = np.median(h[:, sweep], axis=0)
    best_med = alphas[np.flatnonzero(med == med.min())]
    if np.all(h[:, sweep] == h[:, sweep].min()):
        print(f"[{name}] every alpha reaches it at the same checkpoint (t = {h[:, sweep].min():.0f}) on every split: "
              "no winner")
        continue
    print(f"[{name}] winners over splits: {counts}; best median: alpha in {best_med.tolist()} "
          f"({med.min():.0f} iterations); alpha=0.2 median {med[i02]:.0f}")

h = hits["F<=F_FedAvg(200)"]
always = alphas[np.all(np.isfinite(h[:, sweep]), axis=0)]
never1 = int(np.sum(~np.isfinite(h[:, i1])))
print(f"\nalpha = 1 under Delta = 9 reaches the loss target in {len(SPLITS) - never1} of {len(SPLITS)} splits within T = 1000.")
print(f"The weights that reach it on every split: alpha in {always.tolist()}, in at most "
      f"{h[:, sweep][:, np.isin(alphas, always)].max():.0f} iterations.")
both = np.isfinite(h[:, i1])
if both.any():
    fin = h[both, i1][:, None] / h[both][:, sweep][:, np.isin(alphas, always)]
    print(f"Where alpha = 1 finishes too, those weights are {fin.min():.1f}-{fin.max():.1f}x faster.")
gap = np.median(h[:, i02]) / np.median(h[:, bench])
print(f"alpha = 0.2 at Delta = 9 against FedAvg at Delta = 0 (loss target): {100 * (gap - 1):.0f}% more iterations "
      "(median over splits; paper: about 10% at 80% accuracy)")
fa, f02 = np.median(acc[:, bench, -1]), np.median(acc[:, i02, -1])
print(f"final accuracy, median over splits: alpha = 0.2, Delta = 9: {f02:.3f}; FedAvg, Delta = 0: {fa:.3f} "
      f"({100 * (fa - f02):.1f} points; paper: within 3%)")
print(f"At Delta = 0, alpha = 1 ends with a smaller training loss than alpha = 0.2 on "
      f"{int(np.sum(loss[:, bench, -1] < loss[:, bench + 1, -1]))} of {len(SPLITS)} splits (paper, eq. (22): it should)")

# the summary below states these; the notebook fails (under the test suite) if a change of code makes one false
assert np.all(hits["acc>=0.80"][:, sweep] == iters[1])
assert never1 == len(SPLITS) and {0.1, 0.2, 0.3, 0.5} <= set(always.tolist())
assert len(winners["acc>=0.90"]) >= 3 and set(winners["acc>=0.90"]) <= {0.05, 0.1, 0.2, 0.3, 0.5}
med90 = np.median(hits["acc>=0.90"][:, sweep], axis=0)[alphas <= 0.5]
assert med90.max() < 1.3 * med90.min()                     # the medians of alpha in [0.05, 0.5]: within 30%
assert len(winners["F<=F_FedAvg(200)"]) == 1                # the loss target: one alpha wins on every split
""")

md(r"""
### What survives

Computed above on five label splits at the paper's $\eta=0.02$ (the cell above asserts each point):

* **The paper's 80% target does not separate the weights here.** Every $\alpha$ passes it at the
  first checkpoint, on every split. The digits are much easier than MNIST.
* **"$\alpha=0.2$ is the best weight" does not survive as stated.** At 90% accuracy the winner
  changes from split to split (at least three different winners, all in $\alpha\in[0.05,0.5]$), and
  the medians of these weights are within 30% of each other. With the loss target, one $\alpha$ wins
  on every split, and the table shows which one and by how much over $\alpha=0.2$.
* **The qualitative claim survives on every split.** Under the delay $\Delta=9$, FedAvg's
  $\alpha=1$ never reaches the loss target within $T=1000$ iterations, while every
  $\alpha\in[0.1,0.5]$ does. A small weight on the stale global model beats using it alone.
""")

md(r"""
## Bound-optimal, exactly optimal and empirically best $\alpha$ against $\Delta$

Three answers to "which $\alpha$?":

* **bound-optimal $\alpha^*$**: the paper's minimiser of $\psi(\alpha,\infty)$. It
  is evaluated with the digits constants ($\beta$, analytic $L=\sqrt2\max\lVert x\rVert$, and
  $\delta$ measured at the visited global models) and with the constants of the quadratic instance.
* **exactly optimal $\alpha$** on a quadratic instance with the same $N$, $\tau$ and $\eta\beta$.
  One period of FedDelAvg is an affine map there, so both the asymptotic gap
  $F(\mathbf w_\infty)-F(\mathbf w^*)$ and the asymptotic rate (the spectral radius) are exact
  functions of $\alpha$.
* **empirically best $\alpha$** on digits (split 0 only; the previous section shows how much
  the split moves such answers): the grid $\alpha$ with the smallest mean training loss over
  $K=50$ periods (area under the loss curve, a convergence-speed criterion).
""")

code(r"""
Deltas_emp = np.array([0, 3, 6, 9])
agrid = np.array([0.05, 0.1, 0.2, 0.4, 0.7, 1.0])
t0 = time.time()
sw = feddelavg(fed, eta=eta, tau=tau, Delta=Deltas_emp[:, None], alpha=agrid[None, :], K=50)
mean_loss = np.asarray(sw.losses).mean(axis=-1)          # (nDelta, nalpha)
alpha_emp = agrid[np.argmin(mean_loss, axis=1)]
print(f"digits sweep {Deltas_emp.size}x{agrid.size} configurations in {time.time() - t0:.1f} s")
print("empirically best alpha per Delta:", dict(zip(Deltas_emp.tolist(), alpha_emp.tolist())))

q = flt.random_quadratic_federation(M=10, d=4, kappa=10, heterogeneity=1.0, weights="dirichlet", seed=0)
eta_q = eta * float(fed.beta) / float(q.L)          # same eta*beta as on digits
Deltas = np.arange(tau + 1)
cmp_q = exact.alpha_comparison(q, eta=eta_q, tau=tau, Deltas=Deltas)

from fltheory.papers.feddelavg.bounds import alpha_star   # the paper's alpha*
delta_digits = float(np.asarray(fed.weights) @ np.asarray(fed.delta_at(run0.w_periods[alphas.size]))) # at FedAvg's models
a_star_digits = np.asarray(alpha_star(eta=eta, beta=float(fed.beta), L=float(fed.L), delta=delta_digits, tau=tau, Delta=Deltas), float)
a_star_q = np.asarray(alpha_star(eta=eta_q, beta=float(q.L), L=float(cmp_q.L), delta=float(cmp_q.delta), tau=tau, Delta=Deltas), float)
eb_small = 0.02   # alpha* depends on (eta beta, delta/L, tau, Delta) only: the same digits constants at a smaller step
a_star_small = np.asarray(alpha_star(eta=eb_small / float(fed.beta), beta=float(fed.beta), L=float(fed.L), delta=delta_digits,
                                     tau=tau, Delta=Deltas), float)
print(f"digits: delta/L = {delta_digits / float(fed.L):.3g};  quadratic: delta/L = {float(cmp_q.delta) / float(cmp_q.L):.3g}")
print(f"alpha* (digits, eta*beta={eb_small}):", np.round(a_star_small, 3).tolist())
print("Delta:                  ", Deltas.tolist())
print("alpha* (digits consts): ", np.round(a_star_digits, 3).tolist())
print("alpha* (quadratic):     ", np.round(a_star_q, 3).tolist())
print("exact gap-optimal (q):  ", np.round(np.asarray(cmp_q.alpha_gap), 3).tolist())
print("exact rate-optimal (q): ", np.round(np.asarray(cmp_q.alpha_rate), 3).tolist())
""")

code(r"""
fig, ax = plt.subplots(figsize=(7, 4.2))
alpha_vs_delta_figure(cmp_q, ax=ax, empirical=(Deltas_emp, alpha_emp), curves={
    r"bound-optimal $\alpha^*$ (digits constants)": a_star_digits,
    r"bound-optimal $\alpha^*$ (digits constants, $\eta\beta=0.02$)": a_star_small},
    title=r"Which $\alpha$? bound vs exact (quadratic) vs empirical (digits), $\eta\beta=%.2f$, $\tau=10$" % (eta * float(fed.beta)))
fig.tight_layout(); fig.savefig(FIG / "feddelavg_alpha_vs_delta.png", dpi=110); plt.show()
""")

code(r"""
a_gap, a_rate = np.asarray(cmp_q.alpha_gap), np.asarray(cmp_q.alpha_rate)
print("Reading the figure (computed):")
print(f"* bound-optimal alpha* < 1 for Delta in {Deltas[a_star_digits < 1 - 1e-9].tolist()} (digits constants) and "
      f"{Deltas[a_star_q < 1 - 1e-9].tolist()} (quadratic constants); at eta*beta = {eta * float(fed.beta):.2f} the "
      "bound barely penalises a stale model")
print(f"* exact gap-optimal alpha on the quadratic: {np.round(a_gap, 3).tolist()}; with alpha = 1 and Delta = tau - 1 a "
      "period is one centralized GD step from the stale average, so the asymptotic bias can vanish")
print(f"* exact rate-optimal alpha: {np.round(a_rate, 3).tolist()}; small alpha lets the local models converge fast, "
      "but to a biased point, so the rate alone prefers alpha -> 0 when Delta is near tau")
print(f"* empirically best alpha on digits (mean training loss over 50 periods): {dict(zip(Deltas_emp.tolist(), alpha_emp.tolist()))}")
agree = np.isclose(np.interp(Deltas_emp, Deltas, a_star_digits), alpha_emp, atol=0.15)
print(f"* alpha* within 0.15 of the empirical best at Delta = {Deltas_emp[agree].tolist()}, not at {Deltas_emp[~agree].tolist()}: "
      "alpha* minimises an upper bound with phi held fixed; it is a trend, not the best weight")
# the sentences printed above
assert Deltas[a_star_digits < 1 - 1e-9].tolist() == Deltas[a_star_q < 1 - 1e-9].tolist() == [tau]   # barely penalised
assert a_gap[tau - 1] == 1.0                                        # alpha = 1 at Delta = tau - 1: no asymptotic bias
assert np.all(np.diff(a_rate[3:]) < 0) and a_rate[-1] < 0.25       # the rate alone: alpha -> 0 as Delta -> tau
assert agree.any() and not agree.all()
""")


code(r"""
print(f"notebook compute time: {time.time() - t_start:.1f} s")
""")


md(r"""
## The best weight at the horizon, beside $\alpha^*$

$\alpha^*$ minimises the asymptotic bound $\psi(\alpha,\infty)$. At a finite horizon the quantity
Theorem 1 bounds (as its proof establishes it), $\min_{1\le k\le K}F(w(k\tau-\Delta))-F(w^*)$, is exact on
quadratics for every $\alpha$, so `feddelavg.best_step_size` finds the $\alpha$ that minimises it (the
package's adversarial search, then golden section in $\log\alpha$; `tune=("alpha", "eta")` tunes the step
too) and puts $\alpha^*$ beside it. Three clients, $\eta=0.1$, $\tau=4$, $\Delta=3$, $K=10$ periods.
""")

code(r"""
from fltheory.papers.feddelavg import best_step_size
from fltheory.plotting import step_size_figure

best = best_step_size(fed=flt.random_quadratic_federation(M=3, d=2, kappa=4, seed=2), eta=0.1, tau=4, Delta=3, K=10,
                      budget=12)
print(best)
assert best.prescribed["alpha"] == 1.0 and best.best["alpha"] < 1.0   # alpha* = 1; the exact optimum is below 1
assert best.ratio > 1
assert best.best_error <= min(best.curve["errors"])                   # no point of the plotted grid is better
fig = step_size_figure(best, title="FedDelAvg: exact error at K = 10 against alpha")
fig.savefig(FIG / "feddelavg_best_alpha.png", dpi=110, bbox_inches="tight")
fig
""")

md(r"""
Here $\alpha^*=1$ (plain FedAvg with a stale model), while the exact error at the horizon is least at
an $\alpha<1$, lower by the printed ratio.
""")


if __name__ == "__main__":
    nb.write(Path(__file__).with_name("feddelavg.ipynb"))
