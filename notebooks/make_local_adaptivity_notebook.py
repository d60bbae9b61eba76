"""Generate notebooks/local_adaptivity.ipynb (run: python notebooks/make_local_adaptivity_notebook.py).

The notebook redraws Fig. 1 of Wang et al., "Local Adaptivity in Federated Learning",
on the 3-client quadratic of the paper (the paper does not give its instance): FedOpt
trajectories and the fixed-point residual ||x - E[A](x)|| (Fig. 1(a)), training curves with client
learning-rate decay (Fig. 1(b)), the bias against eta on log-log axes with fitted slopes, and the
exact mean-squared error under additive noise against a Monte-Carlo average.  Every claim the
figures make is also asserted, so the test suite (tests/test_notebooks.py) fails if the science breaks.
"""
from pathlib import Path

from nbgen import NotebookBuilder

nb = NotebookBuilder()
md, code = nb.md, nb.code


md(r"""
# Local adaptivity in FedOpt: where it converges, and how correction fixes it

Wang, Xu, Garrett, Charles, Liu and Joshi study FedOpt with restarted client optimizers. Each round,
client $i$ runs $\tau_i$ steps of its optimizer from the global model $x$, which defines the client
operator $\mathcal A_i(x)$. The server then takes
$x^{+}=x-\alpha\sum_i w_i\,[x-\mathcal A_i(x)]$ (eq. (5)). With deterministic gradients FedOpt converges
to a fixed point $\widetilde x$ of $\mathbb E[\mathcal A]=\sum_i w_i\mathcal A_i$, and $\widetilde x$
need not be the minimiser $x^*$ of $F=\sum_i w_iF_i$ (*minimizer inconsistency*).

The paper's Fig. 1 shows this on a synthetic 2-D quadratic whose parameters it does not give. Here we use the instance of the paper: $M=3$, $d=2$, $w=(0.5,0.3,0.2)$ and
$F_i(x)=\tfrac12(x-x_i^*)^\top H_i(x-x_i^*)$ with

$$H_1=\begin{pmatrix}2&.5\\.5&1\end{pmatrix},\ x_1^*=(1,0);\qquad
H_2=\begin{pmatrix}1&0\\0&4\end{pmatrix},\ x_2^*=(0,2);\qquad
H_3=\begin{pmatrix}3&-1\\-1&2\end{pmatrix},\ x_3^*=(-1,-1),$$

so that $x^*=\bar H^{-1}\sum_iw_iH_ix_i^*=(91/319,\,370/319)$. The clients run
* **local GD** ($P_i=I$), the FedAvg client;
* **fixed Jacobi preconditioning** $P_i=\operatorname{diag}(H_i)^{-1}$ (Theorem 2's setting, closed forms);
* **local AdaGrad**, restarted each round with $v_0=0.1$, $\epsilon=0$ (no closed form; simulated).

The closed forms come from `fltheory.papers.local_adaptivity.exact`. The simulations come from the
batched simulator `algorithm.fedopt`, which runs the actual local steps.
""")

code(r"""
import time
import numpy as np
import matplotlib.pyplot as plt
import os
from pathlib import Path
from scipy.optimize import fsolve

import fltheory as flt
from fltheory.plotting import bias_vs_eta_figure, loglog_slope
from fltheory.papers.local_adaptivity import exact
from fltheory.papers.local_adaptivity.algorithm import fedopt, client_update

# figures go to $FLTHEORY_FIGURES (the test run points it at a temporary folder), else to figures/
FIG = Path(os.environ.get("FLTHEORY_FIGURES", "figures")); FIG.mkdir(parents=True, exist_ok=True)
t_start = time.time()
H = np.array([[[2, .5], [.5, 1]], [[1, 0], [0, 4]], [[3, -1], [-1, 2]]], float)
x_opt = np.array([[1.0, 0], [0, 2], [-1, -1]])
w = np.array([0.5, 0.3, 0.2])
fed = flt.QuadraticFederation(H, x_opt, w)
P_jac = np.array([np.diag(1 / np.diag(h)) for h in H])     # Jacobi preconditioners diag(H_i)^-1
xs = np.asarray(fed.x_star)
tau, v0 = 5, 0.1
ADA = dict(client_opt="adagrad", v0=v0, eps=0.0)
JAC = dict(client_opt="precond", precond=P_jac)
assert np.allclose(xs, [91 / 319, 370 / 319], rtol=0, atol=1e-14)
print("x* =", xs)
""")

md(r"""
## (a) Where each method converges: trajectories over the contours of $F$

**Theorem 2.** Take quadratic clients running preconditioned GD with a fixed SPD $P_i$, and set
$K_i=(I-\eta_iP_iH_i)^{\tau_i}$. Then one local run is affine, $\mathcal A_i(x)=K_i(x-x_i^*)+x_i^*$
(eq. (90)), and
$$\widetilde x=\Big(\sum_iw_i[I-K_i]\Big)^{-1}\sum_iw_i(I-K_i)x_i^*\ \neq x^*\ \text{(generically)}.$$

**Local correction** (eq. (11)). Client $i$ sends $N_i^{-1}(x-\mathcal A_i(x))$ with
$N_i=\eta_i\sum_kB_i^{(k)}$. That is $N_i=\eta_i\tau_iP_i$ for fixed $P_i$, and
$N_i=\eta_i\sum_kP_i^{(k)}$ for AdaGrad. To first order the corrected update is $\nabla F_i(x)$, so
$$\sum_iw_iN_i^{-1}\big(x^*-\mathcal A_i(x^*)\big)=\nabla F(x^*)+\mathcal O(\eta_i\tau_i)=\mathcal O(\eta_i\tau_i).$$
The corrected fixed point $\hat x$ (closed form in the paper for fixed $P_i$) is therefore
$\mathcal O(\eta)$ from $x^*$.

**Joint correction.** The server also applies $N_s^{-1}$ with $N_s=\sum_iw_iN_i^{-1}$. This does not
depend on $i$, so the fixed point stays $\hat x$, but the step regains the preconditioned scale.

All runs below use $\eta=0.1$, $\tau=5$ and start from $x^{(0)}=(-1,2.2)$. The server rates are
$\alpha=1$ (uncorrected and joint) and $\alpha=0.4$ (local correction). With local correction the
pseudo-gradient is about $\nabla F$, so $\alpha$ plays the role of a GD step on $F$.
""")

code(r"""
eta = 0.1
x0 = np.array([-1.0, 2.2])
R = 30
runs = {   # label: (fedopt keyword arguments, server rate)
    "local GD":               (dict(client_opt="sgd"), 1.0),
    "Jacobi":                 (dict(JAC), 1.0),
    "Jacobi + local cor.":    (dict(JAC, correction="local"), 0.4),
    "Jacobi + joint cor.":    (dict(JAC, correction="joint"), 1.0),
    "AdaGrad":                (dict(ADA), 1.0),
    "AdaGrad + local cor.":   (dict(ADA, correction="local"), 0.4),
    "AdaGrad + joint cor.":   (dict(ADA, correction="joint"), 1.0),
}
traj, final = {}, {}
for lab, (kw, alpha) in runs.items():
    traj[lab] = np.asarray(fedopt(fed, x0=x0, rounds=R, eta=eta, tau=tau, alpha=alpha, **kw).trajectory)
    final[lab] = np.asarray(fedopt(fed, x0=x0, rounds=1500, eta=eta, tau=tau, alpha=alpha, record_every=1500, **kw).x)

# closed forms (Theorem 2 and the paper)
xt_gd = np.asarray(exact.fixed_point(fed, eta=eta, tau=tau).x)
xt_jac = np.asarray(exact.fixed_point(fed, eta=eta, tau=tau, precond=P_jac).x)
xh_jac = np.asarray(exact.fixed_point(fed, eta=eta, tau=tau, precond=P_jac, correction="local").x)
checks = [("local GD", xt_gd), ("Jacobi", xt_jac), ("Jacobi + local cor.", xh_jac), ("Jacobi + joint cor.", xh_jac)]
for lab, ref in checks:
    err = np.abs(final[lab] - ref).max()
    print(f"{lab:22s} simulated {final[lab]}  closed form {ref}  |diff| = {err:.1e}")
    assert err < 1e-10, lab
xt_ada, xh_ada = final["AdaGrad"], final["AdaGrad + local cor."]
assert np.abs(final["AdaGrad + joint cor."] - xh_ada).max() < 1e-10     # N_s keeps the fixed point
for lab, x in [("x~ local GD", xt_gd), ("x~ Jacobi", xt_jac), ("x^ Jacobi", xh_jac), ("x~ AdaGrad", xt_ada), ("x^ AdaGrad", xh_ada)]:
    print(f"||{lab} - x*|| = {np.linalg.norm(x - xs):.5f}")
# the paper and (f)
assert abs(np.linalg.norm(xt_jac - xs) - 0.5017) < 1e-4 and abs(np.linalg.norm(xh_jac - xs) - 0.02471) < 1e-5
assert abs(np.linalg.norm(xt_ada - xs) - 0.90829) < 1e-5 and abs(np.linalg.norm(xh_ada - xs) - 4.5753e-2) < 1e-6
""")

code(r"""
lo, hi = np.array([-1.5, -1.4]), np.array([1.4, 2.6])
g1, g2 = np.meshgrid(np.linspace(lo[0], hi[0], 160), np.linspace(lo[1], hi[1], 160))
grid = np.stack([g1, g2], axis=-1)                       # (160, 160, 2)
Fgrid = np.asarray(fed.loss(grid))
colors = {"local GD": "tab:blue", "Jacobi": "tab:orange", "AdaGrad": "tab:green",
          "Jacobi + local cor.": "tab:red", "AdaGrad + local cor.": "tab:red",
          "Jacobi + joint cor.": "tab:purple", "AdaGrad + joint cor.": "tab:purple"}

def mark(ax, pts):
    ax.plot(*xs, "k*", ms=14, label=r"$x^*$", zorder=5)
    ax.plot(*x_opt.T, "kx", ms=7, label=r"client minima $x_i^*$")
    for (p, m, lab) in pts:
        ax.plot(*p, m, ms=9, mfc="none", mew=2, label=lab, zorder=5)

fig, axes = plt.subplots(1, 2, figsize=(12, 5.2))
families = [("local GD", "Jacobi", "Jacobi + local cor.", "Jacobi + joint cor."),
            ("local GD", "AdaGrad", "AdaGrad + local cor.", "AdaGrad + joint cor.")]
marks = [[(xt_gd, "bs", r"$\tilde x$ local GD (Thm 2)"), (xt_jac, "o", r"$\tilde x$ Jacobi (Thm 2)"),
          (xh_jac, "rD", r"$\hat x$ Jacobi (closed form)")],
         [(xt_gd, "bs", r"$\tilde x$ local GD (Thm 2)"), (xt_ada, "go", r"$\tilde x$ AdaGrad (simulated)"),
          (xh_ada, "rD", r"$\hat x$ AdaGrad (simulated)")]]
for ax, fam, mk, title in zip(axes, families, marks, ["fixed Jacobi preconditioner", "local AdaGrad (restarted)"]):
    ax.contour(g1, g2, Fgrid, levels=np.quantile(Fgrid, np.linspace(0.002, 0.6, 14)), colors="0.75", linewidths=0.8)
    for lab in fam:
        t = traj[lab]
        ax.plot(t[:, 0], t[:, 1], ".-", color=colors[lab], ms=4, lw=1.2, label=f"{lab} ({R} rounds)")
    mark(ax, mk)
    ax.set_xlim(lo[0], hi[0]); ax.set_ylim(lo[1], hi[1]); ax.set_aspect("equal")
    ax.set_title(f"{title}: eta={eta}, tau={tau}", fontsize=10)
    ax.legend(fontsize=7, loc="lower left")
fig.suptitle(r"FedOpt trajectories over the contours of $F$")
fig.tight_layout(); fig.savefig(FIG / "local_adaptivity_trajectories.png", dpi=110); plt.show()
""")

md(r"""
### The Fig.-1(a) quantity $\|x-\mathbb E[\mathcal A](x)\|$

With $\alpha=1$ the FedOpt round is $x^{+}=\mathbb E[\mathcal A](x)$. The norm of the pseudo-gradient
$x-\mathbb E[\mathcal A](x)$ therefore shows where the iteration is heading: it vanishes exactly at
$\widetilde x$. For fixed $P_i$ this norm is, by eq. (9),
$$x-\mathcal A(x)=\sum_iw_i\,[I-(I-\eta_iP_iH_i)^{\tau_i}]\,H_i^{-1}\nabla F_i(x).$$
Each client's gradient is weighted by its own matrix $W_i=[I-K_i]H_i^{-1}$ (the paper's $M_i$), so at
$x^*$ the sum is a *skewed* global gradient and is not zero. The heat maps show this norm on a log
scale (darker = closer to the fixed point). For local AdaGrad it is evaluated by running the local
steps (`client_update`) at every grid point. The last panel is the locally corrected quantity
$\|\sum_iw_iN_i^{-1}(x-\mathcal A_i(x))\|$ of eq. (11), which vanishes at $\hat x\approx x^*$.
""")

code(r"""
pts = grid.reshape(-1, 2)
def adagrad_residual(x, corrected):
    cu = client_update(fed, x=x, eta=eta, tau=tau, **ADA)
    d = np.asarray(cu.delta) / (np.asarray(cu.N) if corrected else 1.0)
    return np.einsum("...m,...mi->...i", w, d)

panels = [
    ("local GD", np.asarray(exact.pseudo_gradient(fed, pts, eta=eta, tau=tau)), xt_gd, r"$\tilde x$"),
    ("Jacobi", np.asarray(exact.pseudo_gradient(fed, pts, eta=eta, tau=tau, precond=P_jac)), xt_jac, r"$\tilde x$"),
    ("AdaGrad", adagrad_residual(pts, False), xt_ada, r"$\tilde x$"),
    ("AdaGrad + local cor.", adagrad_residual(pts, True), xh_ada, r"$\hat x$"),
]
fig, axes = plt.subplots(1, 4, figsize=(17, 4.6))
for ax, (lab, r, fp, fpname) in zip(axes, panels):
    nrm = np.linalg.norm(r, axis=-1).reshape(g1.shape)
    im = ax.pcolormesh(g1, g2, np.log10(nrm), cmap="magma", shading="auto")
    fig.colorbar(im, ax=ax, fraction=0.046, label=r"$\log_{10}\|\cdot\|$")
    t = traj[lab]
    ax.plot(t[:, 0], t[:, 1], ".-", color="cyan", ms=3, lw=1)
    ax.plot(*xs, "w*", ms=14, label=r"$x^*$")
    ax.plot(*fp, "o", ms=9, mfc="none", mec="lime", mew=2, label=fpname)
    ax.set_aspect("equal"); ax.set_title(lab + (r": $\|\sum w_iN_i^{-1}(x-\mathcal{A}_i(x))\|$" if "cor" in lab
                                               else r": $\|x-\mathbb{E}[\mathcal{A}](x)\|$"), fontsize=9)
    ax.legend(fontsize=7, loc="lower left")
    # the grid minimum sits next to the fixed point, and the residual vanishes exactly there
    at_min = pts[np.argmin(nrm)]
    assert np.linalg.norm(at_min - fp) < 0.03, (lab, at_min, fp)
fig.tight_layout(); fig.savefig(FIG / "local_adaptivity_fixed_point_residual.png", dpi=110); plt.show()

r_at = lambda x: np.linalg.norm(exact.pseudo_gradient(fed, x, eta=eta, tau=tau, precond=P_jac))
print(f"Jacobi: ||x - E[A](x)|| = {r_at(np.zeros(2)):.5f} at 0, {r_at(xs):.5f} at x*, {r_at(xt_jac):.1e} at x~")
print(f"eq. (9) at x*: x* - A(x*) = {np.asarray(exact.pseudo_gradient(fed, xs, eta=eta, tau=tau, precond=P_jac))}")
print(f"AdaGrad: ||x - E[A](x)|| = {np.linalg.norm(adagrad_residual(xs, False)):.4f} at x*, "
      f"{np.linalg.norm(adagrad_residual(xt_ada, False)):.1e} at x~")
assert r_at(xt_jac) < 1e-12 and abs(r_at(np.zeros(2)) - 0.31555) < 1e-5 and abs(r_at(xs) - 0.19958) < 1e-5
assert np.linalg.norm(adagrad_residual(xt_ada, False)) < 1e-10 and np.linalg.norm(adagrad_residual(xh_ada, True)) < 1e-10
""")

code(r"""
# How well conditioned is each residual map near its fixed point?  Jacobian J of the pseudo-gradient
# (exact C for fixed P_i; central differences for AdaGrad); one server step with alpha = 1 contracts by rho(I - J).
def fd_jacobian(f, x, h=1e-6):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(2)], axis=-1)
jacobians = {
    "local GD": np.eye(2) - np.asarray(exact.round_map(fed, eta=eta, tau=tau).A),
    "Jacobi": np.eye(2) - np.asarray(exact.round_map(fed, eta=eta, tau=tau, precond=P_jac).A),
    "AdaGrad": fd_jacobian(lambda x: adagrad_residual(x, False), xt_ada),
    "AdaGrad + local cor.": fd_jacobian(lambda x: adagrad_residual(x, True), xh_ada),
}
Hbar_eig = np.linalg.eigvalsh(np.asarray(fed.Hbar))
print(f"eigenvalues of Hbar: {Hbar_eig}, condition number {Hbar_eig[-1] / Hbar_eig[0]:.3f}")
kappa = {}
for lab, J in jacobians.items():
    ev = np.linalg.eigvals(J)
    kappa[lab] = abs(ev).max() / abs(ev).min()
    print(f"{lab:22s} eigenvalues of J: {np.round(np.sort(ev.real), 4)}, condition number {kappa[lab]:.2f}")
assert kappa["AdaGrad"] > kappa["local GD"]   # on THIS instance AdaGrad does not improve the conditioning
# the text below: the condition numbers, local GD's distance, and the corrected Jacobian against Hbar
assert abs(Hbar_eig[-1] / Hbar_eig[0] - 1.12) < 0.005 and abs(kappa["local GD"] - 1.12) < 0.005
assert abs(kappa["AdaGrad"] - 3.3) < 0.05 and abs(np.linalg.norm(xt_gd - xs) - 0.30) < 0.01
ev_cor = np.sort(np.linalg.eigvals(jacobians["AdaGrad + local cor."]).real)
assert np.all(np.abs(ev_cor / Hbar_eig - 1) < 0.05)          # eigenvalues within 5% of Hbar's
""")

md(r"""
The paper's caption says that under local AdaGrad "the optimization landscape is better
conditioned, but the fixed point is inconsistent". Only the second half carries over to this
instance. Here $\bar H$ is already almost isotropic (condition number 1.12), so there is nothing for
AdaGrad to fix. Its residual map is in fact *less* well conditioned near $\widetilde x$
(condition number about 3.3 against 1.12 for local GD, as printed above). The paper's instance is not
given, and it was presumably ill-conditioned. The inconsistency, on the other hand, is large
and robust. AdaGrad's fixed point is $0.91$ from $x^*$, further than the Jacobi one ($0.50$) and
than local GD's ($0.30$ at $\eta=0.1$). The corrected residual is centred at $\hat x$, which is
$0.046$ from $x^*$, and its Jacobian is close to $\bar H$ (its eigenvalues within 5% of $\bar H$'s;
eq. (11): the corrected update is $\nabla F+\mathcal O(\eta\tau)$). Each of these numbers is asserted in the
cells above.
""")

md(r"""
### Training curves with client learning-rate decay (Fig. 1(b))

The paper decays the client learning rate at rounds 200 and 400 (factor not given; we use $\times0.1$).
If $\widetilde x$ were only $\mathcal O(\eta)$ biased, as for local GD, decaying $\eta$ would shrink the
gap. For local AdaGrad it does not.
""")

code(r"""
stages, decay = 200, 0.1
curves = {}
for lab in ("local GD", "AdaGrad", "AdaGrad + local cor.", "AdaGrad + joint cor."):
    kw, alpha = runs[lab]
    x, segs = x0, []
    for s in range(3):
        tr = np.asarray(fedopt(fed, x0=x, rounds=stages, eta=eta * decay**s, tau=tau, alpha=alpha, **kw).trajectory)
        segs.append(tr if s == 0 else tr[1:])
        x = tr[-1]
    curves[lab] = np.linalg.norm(np.concatenate(segs) - xs, axis=-1)
fig, ax = plt.subplots(figsize=(7, 4.2))
for lab, c in curves.items():
    ax.semilogy(c, color=colors[lab] if lab != "local GD" else "tab:blue", label=lab)
for r in (stages, 2 * stages):
    ax.axvline(r, color="0.6", ls=":", lw=1)
ax.set_xlabel("round t"); ax.set_ylabel(r"$\|x^{(t)}-x^*\|$")
ax.set_title(r"client LR $\eta=0.1\to0.01\to0.001$ at rounds 200, 400 ($\tau=5$)")
ax.legend(fontsize=8); fig.tight_layout(); fig.savefig(FIG / "local_adaptivity_lr_decay.png", dpi=110); plt.show()
end = {lab: c[[stages, 2 * stages, -1]] for lab, c in curves.items()}
for lab, e in end.items():
    print(f"{lab:22s} ||x - x*|| at rounds 200/400/600: " + "  ".join(f"{v:.3g}" for v in e))
assert np.all(end["AdaGrad"] > 0.9)                         # the gap does not close with decay
assert end["AdaGrad + local cor."][-1] < 1e-3               # corrected: O(eta) gap, follows the decay
assert end["local GD"][-1] > end["AdaGrad + local cor."][-1]  # plain GD is slow once eta is small
assert np.all(end["AdaGrad"] < 0.92)                        # the text below: about 0.91 whatever eta is
assert end["AdaGrad + joint cor."][-1] > 5 * end["AdaGrad + local cor."][-1]   # joint correction lags after decays
""")

md(r"""
Decaying $\eta$ shrinks the $\mathcal O(\eta)$ gaps of local GD and of the corrected methods, but local
GD's steps shrink with $\eta$ and it stops short of its new fixed point. Uncorrected AdaGrad stays
about $0.91$ away whatever $\eta$ is. With local correction the server step is about
$\alpha\nabla F(x)$ whatever $\eta$ is, so it tracks the decay at once. Joint correction has the same
fixed points, but its step scales with the harmonic mean of the $N_i\propto\eta$. At a fixed
$\alpha=1$ it therefore slows down after each decay, the same way local GD does: at round 600 it is more
than 5 times further from $x^*$ than local correction (asserted above, with AdaGrad's $0.9<\cdot<0.92$).
""")

md(r"""
## (b) Vanishing and non-vanishing bias: $\|x_\infty-x^*\|$ against $\eta$

What each theory line predicts for $\|x_\infty-x^*\|$ as $\eta\to0$ ($\tau=5$ throughout):

| method | prediction | slope on log–log axes |
|---|---|---|
| local GD, common $\eta,\tau$ | $\widetilde x-x^*=\frac{(\tau-1)\eta}2\bar H^{-1}\sum_iw_iH_i^2(x^*-x_i^*)+\mathcal O(\eta^2)$ | 1 |
| Jacobi, uncorrected | $\widetilde x\to(\sum_iw_i\tau_iP_iH_i)^{-1}\sum_iw_i\tau_iP_iH_ix_i^*\neq x^*$ (eq. (8)) | 0 (non-vanishing) |
| Jacobi + local correction | $\hat x-x^*=\frac{(\tau-1)\eta}{2}\bar H^{-1}\sum_iw_iH_iP_iH_i(x^*-x_i^*)+\mathcal O(\eta^2)$ (eq. (11)) | 1 |
| local AdaGrad, uncorrected | $\widetilde x\to$ the root of $\sum_iw_iS_i(x)\odot\nabla F_i(x)=0$ | 0 (non-vanishing) |
| AdaGrad + local correction | $\hat x\to x^*$, $\mathcal O(\eta)$ (eq. (11), Theorem 3) | 1 |

Every point is the end of a batched `fedopt` run. All $\eta$ values go through **one** call per
method, as a batch of configurations ($\eta$ of shape `(B, 1)`, $\alpha$ of shape `(B,)`). The server
rate does not change the fixed point, so each configuration uses a rate that converges fast:
$\alpha=0.5\,\alpha_{\max}$ from `exact.alpha_max` for the fixed-$P$ methods, $\alpha=0.1/\eta$ for
uncorrected AdaGrad (its update is $\mathcal O(\eta)$), and $\alpha=0.4$ for corrected AdaGrad.
The closed forms are drawn as thin lines under the simulated points.
""")

code(r"""
etas = np.logspace(-3, -1, 9)
E = etas[:, None]                    # one configuration per eta
def simulate(kw, alpha, rounds):
    r = fedopt(fed, x0=np.zeros(2), rounds=rounds, eta=E, tau=tau, alpha=alpha, record_every=rounds - 1, **kw)
    tr = np.asarray(r.trajectory)
    assert np.abs(tr[-1] - tr[-2]).max() < 1e-12, "not converged"   # the last round moved < 1e-12
    return np.asarray(r.x)

t0 = time.time()
amax = lambda **k: np.asarray(exact.alpha_max(fed, eta=E, tau=tau, **k))
sim = {
    "local GD": simulate(dict(client_opt="sgd"), 0.5 * amax(), 400),
    "Jacobi, uncorrected": simulate(JAC, 0.5 * amax(precond=P_jac), 400),
    "Jacobi + local cor.": simulate(dict(JAC, correction="local"), 0.5 * amax(precond=P_jac, correction="local"), 400),
    "AdaGrad, uncorrected": simulate(ADA, 0.1 / etas, 800),
    "AdaGrad + local cor.": simulate(dict(ADA, correction="local"), np.full(etas.size, 0.4), 400),
    "AdaGrad + joint cor.": simulate(dict(ADA, correction="joint"), 0.1 / etas, 800),
}
print(f"{len(sim)} batched runs over {etas.size} eta values in {time.time() - t0:.1f} s")
closed = {
    "local GD": exact.fixed_point(fed, eta=E, tau=tau).x,
    "Jacobi, uncorrected": exact.fixed_point(fed, eta=E, tau=tau, precond=P_jac).x,
    "Jacobi + local cor.": exact.fixed_point(fed, eta=E, tau=tau, precond=P_jac, correction="local").x,
}
for lab, x in closed.items():
    err = np.abs(sim[lab] - np.asarray(x)).max()
    print(f"{lab:22s} max |simulated - closed form| = {err:.1e}")
    assert err < 1e-10
assert np.abs(sim["AdaGrad + joint cor."] - sim["AdaGrad + local cor."]).max() < 1e-10   # same fixed point
bias = {lab: np.linalg.norm(x - xs, axis=-1) for lab, x in sim.items() if "joint" not in lab}
""")

code(r"""
# eta -> 0 limits: eq. (8) for Jacobi; the AdaGrad limit equation of the paper
lim_jac = np.asarray(exact.small_eta_limit(fed, tau=tau, precond=P_jac))
def ada_limit(x):
    g = np.asarray(fed.grad_clients_at(x))                                # (M, d)
    S = sum(1 / np.sqrt(v0 + (k + 1) * g**2) for k in range(tau))         # S_i(x), eps = 0
    return w @ (S * g)
lim_ada = fsolve(ada_limit, sim["AdaGrad, uncorrected"][0], xtol=1e-12)
first = np.asarray(exact.first_order_bias(fed, eta=1.0, tau=tau, precond=P_jac, correction="local"))
first_gd = np.asarray(exact.first_order_bias(fed, eta=1.0, tau=tau, correction="none"))
print(f"eq. (8) Jacobi limit {lim_jac}, ||. - x*|| = {np.linalg.norm(lim_jac - xs):.6f}")
print(f"AdaGrad eta->0 root  {lim_ada}, ||. - x*|| = {np.linalg.norm(lim_ada - xs):.6f}")
assert np.allclose(lim_jac, [775 / 2379, 1668 / 2379], atol=1e-12)
assert np.allclose(lim_ada, [0.5634072633, 0.2626193178], atol=1e-9)
assert abs(np.linalg.norm(lim_ada - xs) - bias["AdaGrad, uncorrected"][0]) < 2e-3  # eta = 1e-3 is near the limit

fig, ax = plt.subplots(figsize=(7.5, 5))
bias_vs_eta_figure(etas, bias, ax=ax, title=r"bias of the FedOpt limit, $\tau=5$ (points: batched simulator)")
fine = np.logspace(-3, -1, 60)[:, None]
thin = dict(color="0.4", lw=0.7, ls="--")
for lab, kw in [("local GD", {}), ("Jacobi, uncorrected", dict(precond=P_jac)),
                ("Jacobi + local cor.", dict(precond=P_jac, correction="local"))]:
    ax.loglog(fine[:, 0], np.linalg.norm(np.asarray(exact.fixed_point(fed, eta=fine, tau=tau, **kw).x) - xs, axis=-1), **thin)
ax.loglog(fine[:, 0], fine[:, 0] * np.linalg.norm(first), ":", color="tab:green", lw=1)
ax.loglog(fine[:, 0], fine[:, 0] * np.linalg.norm(first_gd), ":", color="tab:blue", lw=1)
ax.axhline(np.linalg.norm(lim_jac - xs), color="tab:orange", lw=0.8, ls=":")
ax.axhline(np.linalg.norm(lim_ada - xs), color="tab:red", lw=0.8, ls=":")
ax.text(1.1e-3, 0.40, "eq. (8) limit", fontsize=7, color="tab:orange")
ax.text(1.1e-3, 1.0, r"AdaGrad $\eta\to0$ root", fontsize=7, color="tab:red")
ax.set_ylim(1e-4, 3)
fig.tight_layout(); fig.savefig(FIG / "local_adaptivity_bias_vs_eta.png", dpi=110); plt.show()

slopes = {lab: loglog_slope(etas, b) for lab, b in bias.items()}
for lab, s in slopes.items():
    print(f"{lab:22s} slope {s:+.3f}   bias at eta=1e-3: {bias[lab][0]:.4g}, at eta=0.1: {bias[lab][-1]:.4g}")
for lab in ("local GD", "Jacobi + local cor.", "AdaGrad + local cor."):
    assert abs(slopes[lab] - 1) < 0.1, lab                     # vanishing, O(eta) bias
for lab, floor in (("Jacobi, uncorrected", 0.45), ("AdaGrad, uncorrected", 0.9)):
    assert abs(slopes[lab]) < 0.05 and bias[lab].min() > floor, lab   # non-vanishing bias
# the slope-1 curves match the first-order formulas at small eta
assert abs(bias["Jacobi + local cor."][0] / (1e-3 * np.linalg.norm(first)) - 1) < 0.01
assert abs(bias["local GD"][0] / (1e-3 * np.linalg.norm(first_gd)) - 1) < 0.01
# the text below: the eq. (8) level, and AdaGrad's bias growing as eta decreases
assert abs(np.linalg.norm(lim_jac - xs) - 0.4605) < 5e-5
b_ada = bias["AdaGrad, uncorrected"]
assert abs(b_ada[-1] - 0.908) < 5e-4 and abs(b_ada[0] - 0.938) < 5e-4 and np.all(np.diff(b_ada[:-1]) < 0)
""")

md(r"""
The uncorrected adaptive curves are flat. Jacobi levels off at the eq. (8) limit $0.4605$. AdaGrad's
bias even *grows* slightly as $\eta$ decreases ($0.908\to0.938$ from $\eta=0.1$ to $10^{-3}$; monotone below
$\eta\approx0.08$), towards the root of its limit equation (asserted above). Local correction turns both into slope-1 curves, like plain local GD, whose
$\mathcal O(\eta(\tau-1))$ bias comes from the higher-order terms and which correction does not
change ($N_i=\eta\tau I$ is a common scalar).

## (c) Exact $\mathbb E\|x_t-\widetilde x\|^2$ under additive noise, and Theorem 1

With stochastic gradients $g_i=\nabla F_i(y)+\nu$, $\nu\sim\mathcal N(0,\Sigma_i)$, each local run is
still affine in $x$ plus noise whose covariance does not depend on $x$:
$\operatorname{Cov}[\mathcal A_i(x)]=\eta_i^2\sum_{j<\tau_i}S_i^jP_i\Sigma_iP_i(S_i^j)^\top$ with
$S_i=I-\eta_iP_iH_i$. The mean then follows the deterministic round map $x^+=Rx+\alpha b$, and the
covariance follows $\Sigma^+=R\Sigma R^\top+\alpha^2\sum_iw_i^2T_i\operatorname{Cov}_iT_i^\top$, where
$T_i=I$, $N_i^{-1}$ or $N_s^{-1}N_i^{-1}$. So
$\mathbb E\|x_t-\widetilde x\|^2=\|m_t-\widetilde x\|^2+\operatorname{tr}C_t$ is exact. Below we compare
it with a Monte-Carlo average over 2000 independent seeds: one batched `fedopt` call per method,
with the seeds as configurations and keyed noise. The setting is $\Sigma_i=0.25\,I$, $\eta=0.1$,
$\tau=5$, $\alpha=0.5$.

For local GD we also draw the bound of **Theorem 1** in its one-step form (61), unrolled for constant
$\alpha\le1$:
$$\mathbb E\|x^{(T)}-\widetilde x\|^2\le(1-\alpha a)^T\|x^{(0)}-\widetilde x\|^2+\alpha C_q/a,\qquad
a=1-\bar h,\ \bar h=\sum_iw_i\|K_i\|^2,\ C_q=\sigma^2\sum_iw_i^2\,\tau\eta^2,\ \sigma^2=\max_i\operatorname{tr}\Sigma_i.$$
""")

code(r"""
fed_n = flt.QuadraticFederation(H, x_opt, w, sigma2=0.25)
S, T, alpha_n = 2000, 60, 0.5
cases = {"local SGD": (dict(client_opt="sgd"), {}),
         "Jacobi SGD": (JAC, dict(precond=P_jac)),
         "Jacobi SGD + local cor.": (dict(JAC, correction="local"), dict(precond=P_jac, correction="local")),
         "Jacobi SGD + joint cor.": (dict(JAC, correction="joint"), dict(precond=P_jac, correction="joint"))}
t0 = time.time()
mse_exact, mse_mc, mse_se = {}, {}, {}
for lab, (kw, ekw) in cases.items():
    target = np.asarray(exact.fixed_point(fed_n, eta=eta, tau=tau, **ekw).x)
    mom = exact.noise_moments(fed_n, eta=eta, tau=tau, alpha=alpha_n, x0=x0, T=T, **ekw)
    mse_exact[lab] = np.asarray(mom.mse(target))
    run = fedopt(fed_n, x0=np.broadcast_to(x0, (S, 2)), rounds=T, eta=eta, tau=tau, alpha=alpha_n, seed=7, **kw)
    e2 = ((np.asarray(run.trajectory) - target) ** 2).sum(axis=-1)          # (T+1, S)
    mse_mc[lab], mse_se[lab] = e2.mean(axis=1), e2.std(axis=1, ddof=1) / np.sqrt(S)
print(f"{len(cases)} x {S} noisy runs of {T} rounds in {time.time() - t0:.1f} s")

ac = exact.assumption_constants(fed_n, eta=eta, tau=tau)
hbar = float(w @ np.asarray(ac.h))
a = 1 - hbar
sigma2 = float(np.max(np.asarray(fed_n.noise_trace)))
Cq = sigma2 * float(w**2 @ np.full(3, tau * eta**2))
r0 = mse_exact["local SGD"][0]
bound = (1 - alpha_n * a) ** np.arange(T + 1) * r0 + alpha_n * Cq / a

fig, ax = plt.subplots(figsize=(7.5, 4.6))
t_ax = np.arange(T + 1)
for j, lab in enumerate(cases):
    c = f"C{j}"
    ax.semilogy(t_ax, mse_exact[lab], "-", color=c, lw=1.5, label=f"{lab}: exact")
    ax.fill_between(t_ax, mse_mc[lab] - 2 * mse_se[lab], mse_mc[lab] + 2 * mse_se[lab], color=c, alpha=0.25)
    ax.semilogy(t_ax[::3], mse_mc[lab][::3], "o", color=c, ms=3, label=f"{lab}: Monte Carlo ({S} seeds, ±2 s.e.)")
ax.semilogy(t_ax, bound, "k--", lw=1, label=r"Theorem 1, eq. (61) unrolled (local SGD)")
ax.set_xlabel("round t"); ax.set_ylabel(r"$\mathbb{E}\|x^{(t)}-\tilde x\|^2$  (target: own fixed point)")
ax.set_title(r"additive noise $\Sigma_i=0.25I$, $\eta=0.1$, $\tau=5$, $\alpha=0.5$")
ax.legend(fontsize=6.5); fig.tight_layout(); fig.savefig(FIG / "local_adaptivity_noise_mse.png", dpi=110); plt.show()

for lab in cases:
    z = np.abs(mse_mc[lab][1:] - mse_exact[lab][1:]) / mse_se[lab][1:]
    print(f"{lab:24s} stationary E||x - x~||^2: exact {mse_exact[lab][-1]:.4g}, MC {mse_mc[lab][-1]:.4g}; "
          f"max |MC - exact| / s.e. over t = {z.max():.2f}")
    assert z.max() < 4.5, lab
    assert np.isclose(mse_mc[lab][0], mse_exact[lab][0])
print(f"Theorem 1: hbar = {hbar:.4f}, stationary bound {alpha_n * Cq / a:.4g} vs exact {mse_exact['local SGD'][-1]:.4g}")
assert np.all(bound >= mse_exact["local SGD"] * (1 - 1e-12))
# the text below: local correction's stationary error is larger at the same alpha, joint correction's smaller;
# Theorem 1's stationary level is about 3 times the exact one
stat = {lab: mse_exact[lab][-1] for lab in cases}
assert stat["Jacobi SGD + local cor."] > stat["Jacobi SGD"] > stat["Jacobi SGD + joint cor."]
assert 2.5 < alpha_n * Cq / a / stat["local SGD"] < 3.5
""")

md(r"""
The exact moments and the simulator agree within Monte-Carlo error at every round. The simulator's
keyed noise and the closed-form covariance therefore describe the same process. Local correction
changes the noise as well as the bias: $N_i^{-1}$ rescales each client's update by
$1/(\eta\tau)$, so at the same $\alpha$ its stationary error is larger. Joint correction restores the
scale (its stationary error is below the uncorrected one). Theorem 1's recursion holds here at every
round, and its stationary level $\alpha C_q/a$ is about $3\times$ the exact value (between 2.5 and 3.5
times; all asserted above).
""")

code(r"""
elapsed = time.time() - t_start
print(f"notebook compute time: {elapsed:.1f} s")
""")


md(r"""
## The best server rate at the horizon, beside Theorem 3's

Theorem 3 sets the server rate $\alpha=\eta\tau$ ((127), common $\eta$, $\tau$). The quantity (126) bounds,
$\frac1T\sum_{t<T}\mathbb E\|\nabla F(x^{(t)})\|^2$, is exact on quadratic clients with noise for every
$\alpha$, so `local_adaptivity.best_step_size` finds the $\alpha$ that minimises it over
$(0,\alpha_{\max})$ (the exact convergence limit of the round map; the package's adversarial search,
then golden section in $\log\alpha$) and puts $\eta\tau$ beside it. Three clients, local correction,
$\eta=0.1$, $\tau=5$, $T=20$ rounds.
""")

code(r"""
from fltheory.papers.local_adaptivity import best_step_size
from fltheory.plotting import step_size_figure

best = best_step_size(fed=flt.random_quadratic_federation(M=3, d=2, seed=1, sigma2=0.01), eta=0.1, tau=5, T=20,
                      x0=np.ones(2), budget=12)
print(best, f"\nalpha_max = {best.extra['alpha_max']:.6g}")
assert best.ratio > 1                                                      # eta tau is worse than the best ...
assert best.prescribed["alpha"] < best.best["alpha"] < best.extra["alpha_max"]   # ... and smaller; best < alpha_max
assert best.best_error <= min(best.curve["errors"])                        # no point of the plotted grid is better
fig = step_size_figure(best, title="Local correction: exact error against the server rate (T = 20)")
fig.savefig(FIG / "local_adaptivity_best_alpha.png", dpi=110, bbox_inches="tight")
fig
""")

md(r"""
On this instance the best server rate lies between Theorem 3's $\eta\tau$ and $\alpha_{\max}$; the
prescribed rate's error is larger by the printed ratio.
""")


if __name__ == "__main__":
    nb.write(Path(__file__).with_name("local_adaptivity.ipynb"))
