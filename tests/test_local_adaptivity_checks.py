"""Every registered check of the local adaptivity paper gives its expected verdict (quick mode), and the checks can fail."""
import numpy as np
import pytest

from fltheory import verify
from fltheory.validation import per_client
from fltheory.papers.local_adaptivity import bounds as B
from fltheory.papers.local_adaptivity import checks as C
from fltheory.papers.local_adaptivity import checks_proofs as CP
from fltheory.papers.local_adaptivity.algorithm import fedopt

CHECKS = verify.registry(["local_adaptivity"])


@pytest.mark.parametrize("check", CHECKS, ids=[c.name.split(".", 1)[1] for c in CHECKS])
def test_check_gives_expected_verdict(check):
    v = check.run(quick=True, seed=0)
    assert v.instances > 0
    assert v.ok, (v.status, v.expected, v.worst_ratio, v.counterexample)
    if v.status == "violated":
        assert v.counterexample is not None and v.counterexample["ratio"] > 1


def test_printed_counterexamples_are_the_documented_ones():
    ex = verify._REGISTRY["local_adaptivity.sgd_decaying_printed"].run(quick=True).counterexample
    assert ex["params"]["alpha_0"] == pytest.approx(859.75, rel=1e-6)
    assert ex["value"] == pytest.approx(26425.2, rel=1e-5)
    assert ex["bound"] == pytest.approx(0.0033594, rel=1e-4)
    v3 = verify._REGISTRY["local_adaptivity.theorem3_printed"].run(quick=True)
    t3 = v3.counterexample        # the search's tau = T = 1 quadratic client; the sampler's two-client run: 1.045
    assert t3["params"]["tau"] == t3["params"]["T"] == 1 and 2 - 1e-7 < t3["ratio"] < 2
    assert v3.sampled_worst_ratio == pytest.approx(1.0448, rel=1e-4)


def test_a_wrong_closed_form_would_be_caught(monkeypatch):
    """Mutation: shift the fixed point slightly; the identity check must report 'violated'."""
    real = C.exact.fixed_point

    class Shifted:
        def __init__(self, fp):
            self.x, self.residual = fp.x + 1e-6, fp.residual

    monkeypatch.setattr(C.exact, "fixed_point", lambda *a, **k: Shifted(real(*a, **k)))
    assert verify._REGISTRY["local_adaptivity.closed_form_vs_simulation"].run(quick=True).status == "violated"


def test_a_weaker_recursion_would_be_caught(monkeypatch):
    """Mutation: (61) without its noise term alpha^2 Cq must fail on noisy instances."""
    sym = {s.name: s for s in B.theorem1_recursion.symbols}
    mutant = B.theorem1_recursion.with_changes(
        name="mutant", expr=(1 - sym["alpha"] * (1 - sym["hbar"])) * sym["r_t"] + 0 * sym["Cq"])
    monkeypatch.setattr(B, "theorem1_recursion", mutant)
    assert verify._REGISTRY["local_adaptivity.theorem1_recursion"].run(quick=True).status == "violated"


def test_instances_are_reproducible_from_their_seed():
    a = C.instance(123)
    b = C.instance(123)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(getattr(x, "H", x), getattr(y, "H", y))


# ------------------------------------------------------------------ hypothesis, inside the assumptions
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fltheory.problems import SeparableCosineFederation  # noqa: E402


@st.composite
def cosine_runs(draw):
    """the paper, Theorem 3: a_ij in [0.2, 2], b_ij in [0, 2], eta tau <= 1/L, diagonal (AdaGrad) B."""
    M, d = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    arr = lambda lo, hi: np.array(draw(st.lists(st.floats(lo, hi), min_size=M * d, max_size=M * d))).reshape(M, d)  # noqa: E731
    fed = SeparableCosineFederation(arr(0.2, 2.0), arr(0.0, 2.0), arr(-2.0, 2.0), np.full(M, 1.0 / M))
    tau = draw(st.integers(1, 5))
    eta = draw(st.floats(0.05, 1.0)) / (tau * float(fed.L))
    return fed, tau, eta, draw(st.integers(5, 60)), np.array(draw(st.lists(st.floats(-3, 3), min_size=d, max_size=d))), \
        draw(st.floats(1e-3, 1.0))


@settings(max_examples=15)
@given(cosine_runs())
def test_theorem3_general_bound_holds_along_runs(run):
    """(126): (1/T) sum ||grad F(x_t)||^2 <= 2D/(alpha T) + L^2 Lambda G^2 sum w_i eta_i^2 tau_i^2, alpha = eta tau."""
    fed, tau, eta, T, x0, v0 = run
    lhs, D, Lam, G = CP._theorem3_run(fed, eta=eta, tau=tau, T=T, x0=x0, v0=v0, F_inf=float(fed.F_inf))
    assert 1.0 <= Lam <= tau + 1e-12  # E18: Lambda in [1, tau] for diagonal preconditioners
    s2 = float(B.theorem3_aggregates(fed.weights, eta=eta, tau=tau).s2)
    bound = float(B.theorem3_general(D=D, G=G, L=float(fed.L), Lambda=Lam, T=T, alpha=eta * tau, s2=s2))
    assert lhs <= bound * (1 + 1e-9)


@settings(max_examples=15)
@given(st.integers(0, 10_000), st.floats(0.05, 1.0))
def test_theorem1_constant_alpha_against_exact_moments(seed, alpha):
    """(61) unrolled: r_T <= (1 - alpha a)^T r0 + alpha Cq / a on noisy SGD instances (exact moments)."""
    fed, eta, tau, hbar, Cq = CP._sgd_noise_instance(seed)
    x_t = C.exact.fixed_point(fed, eta=per_client(eta), tau=per_client(tau)).x
    r = C.exact.noise_moments(fed, eta=per_client(eta), tau=per_client(tau), alpha=alpha, x0=x_t + 1.0, T=25).mse(x_t)
    bound = B.theorem1_constant_alpha(alpha=alpha, hbar=hbar, Cq=Cq, r0=float(r[0]), T=np.arange(26.0))
    assert np.all(r <= bound * (1 + 1e-9) + 1e-15)


def test_theorem1_printed_fails_for_the_best_server_schedule():
    """(7) with c = 36 read existentially: the greedy schedule is optimal (no schedule found by L-BFGS-B over
    alpha in [0, 1]^T does better), and it exceeds the bound at r0 / C_q = 1e48 (ratio 1.008, T = 623)."""
    from scipy.optimize import minimize

    from fltheory.papers.local_adaptivity import bounds as LB

    k, V, T = 0.7, 0.01, 12
    greedy = CP._best_schedule_1d(k=k, V=V, r0=1.0, T=T)[T]

    def r_T(alpha):
        r = 1.0
        for a in alpha:
            r = (1 - a * (1 - k)) ** 2 * r + a * a * V
        return r

    rng = np.random.default_rng(0)
    best = min(minimize(r_T, rng.uniform(0, 1, T), bounds=[(0.0, 1.0)] * T, method="L-BFGS-B").fun for _ in range(5))
    assert greedy <= best * (1 + 1e-9)
    r = CP._best_schedule_1d(k=0.91, V=1e-48, r0=1.0, T=623)[623]
    bound = float(LB.theorem1_printed(hbar=0.91**2, Cq=1e-48, r0=1.0, T=623, c_T1=36.0))
    assert r / bound == pytest.approx(1.008066, rel=1e-5)


def test_readme_quotes_the_best_schedule_counterexample():
    """The README's numbers for (7) under the best server schedule are the check's counterexample (the findings
    table writes them through fltheory.claims, four significant digits)."""
    from pathlib import Path

    from fltheory.claims import _num

    v = verify._REGISTRY["local_adaptivity.theorem1_printed_best_schedule"].run(quick=True)
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert v.status == "violated" and v.counterexample["params"]["T"] == 623
    assert f"ratio {_num(v.counterexample['ratio'])} at C_q = 10⁻⁴⁸, r₀ = 1, T = 623" in readme


def test_adaptive_limits_are_fixed_points_of_the_runs():
    """The adaptive_bias_shrinks check compares exact limits: a run of FedOpt started at each computed limit stays
    there (to round-off), and on the tuned two-client federation the uncorrected limit is x* while the corrected
    one is 1.889e-3 away."""
    from fltheory.problems import QuadraticFederation

    w1 = 0.4995344616676178
    fed = QuadraticFederation(np.array([[[1.0]], [[4.0]]]), np.array([[-1.0], [2.0]]), np.array([w1, 1 - w1]))
    kw = dict(client_opt="adagrad", v0=0.1, eps=0.0, tau=5, eta=0.0025)
    x0, x1 = C._adaptive_limit(fed, False, **kw), C._adaptive_limit(fed, True, **kw)
    assert abs(float(x0[0] - fed.x_star[0])) < 1e-13 and abs(float(x1[0] - fed.x_star[0])) == pytest.approx(1.8892e-3, rel=1e-4)
    for x, corr in ((x0, "none"), (x1, "local")):
        run = fedopt(fed, x0=x, rounds=50, alpha=1.0, record_every=50, noise=False, correction=corr, **kw)
        assert np.abs(run.x - x).max() < 1e-12
