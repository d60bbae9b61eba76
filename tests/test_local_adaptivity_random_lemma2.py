"""Lemma 2 with random x, y and Prop. B.2 (36) for stochastic SGD, as printed, on a C^2 non-quadratic F (issue 24):
the paper's proof treats the integrated Hessian H of Lemma 1 as if it did not depend on the random (x, y); on a
function whose curvature changes (F'' = mu + (L - mu) smoothstep) both fail, while on quadratics they hold."""
import numpy as np
import pytest

from fltheory.papers.local_adaptivity import checks as C
from fltheory.validation import InputError
from fltheory.verify import registry

PAPER = "local_adaptivity"


def _check(what):
    return next(c for c in registry([PAPER]) if c.name == f"{PAPER}.{what}")


def test_the_smoothstep_function_is_c2_strongly_convex_and_smooth():
    """F'' (central differences of F') stays in [mu, L] = [1, 2], is continuous across the transition [a, a + 1], and
    F' is the integral of mu + (L - mu) S: the function meets Lemma 2's hypotheses."""
    z = np.linspace(C.SMOOTH_A - 2, C.SMOOTH_A + 3, 5001)
    h = 1e-4
    F2 = (C.smoothstep_grad(z + h) - C.smoothstep_grad(z - h)) / (2 * h)
    assert F2.min() >= C.SMOOTH_MU - 1e-6 and F2.max() <= C.SMOOTH_L + 1e-6
    assert np.abs(np.diff(F2)).max() < 1e-2                  # continuous (no jump at a or a + 1)
    t = np.clip(z - C.SMOOTH_A, 0, 1)
    S = 3 * t ** 2 - 2 * t ** 3
    exact2 = C.SMOOTH_MU + (C.SMOOTH_L - C.SMOOTH_MU) * S
    assert np.abs(F2 - exact2).max() < 1e-6


def test_the_issue_instance_gives_zero_against_a_quarter():
    """With the transition on [0, 1], (x, y) = (-3, -5) or (11, 12): E[grad F(x) - grad F(y)] = (2 mu - L)/2 = 0 while
    mu^2 ||E[x - y]||^2 = 0.25 -- (14) as printed fails with equality nowhere near."""
    xy = np.array([[-3.0, -5.0], [11.0, 12.0]])
    Eg = np.mean(C.smoothstep_grad(xy[:, 0], a=0.0) - C.smoothstep_grad(xy[:, 1], a=0.0))
    Eu = np.mean(xy[:, 0] - xy[:, 1])
    assert Eg == pytest.approx(0.0, abs=1e-12) and C.SMOOTH_MU ** 2 * Eu ** 2 == 0.25


@pytest.mark.parametrize("which,ratio", [("14", 30.25), ("15", 1.5), ("16", 41 / 11)])
def test_lemma2_random_reading_is_violated(which, ratio):
    v = _check(f"lemma2_{which}_random").run(quick=True, seed=0)
    assert v.status == "violated" and v.ok and v.worst_ratio == pytest.approx(ratio, rel=1e-9)


def test_lemma2_random_holds_on_a_quadratic():
    """The same outcomes with L = mu (a quadratic: H constant) satisfy (14) with equality: the violation comes from
    the curvature changing between the outcomes, not from the sampling."""
    for xy in C.LEMMA2_RANDOM.values():
        xy = np.array(xy)
        Eg = np.mean(C.smoothstep_grad(xy[:, 0], L=1.0) - C.smoothstep_grad(xy[:, 1], L=1.0))
        Eu = np.mean(xy[:, 0] - xy[:, 1])
        assert Eg ** 2 == pytest.approx(Eu ** 2, rel=1e-12)


def test_h_sgd_stochastic_grows_like_one_over_eps_squared_and_holds_on_a_quadratic():
    r = {eps: C.h_sgd_stochastic(eps)[0] / C.h_sgd_stochastic(eps)[1] for eps in (0.5, 1e-2, 1e-3)}
    assert r[0.5] == pytest.approx(0.25 / (0.36 * 0.25), rel=1e-9) and r[1e-3] > 4e5
    assert r[1e-2] / r[1e-3] == pytest.approx(1e-2, rel=0.05)
    v, b, _, _ = C.h_sgd_stochastic(1e-3, L=1.0)               # quadratic F: (36) holds with equality
    assert v == pytest.approx(b, rel=1e-6)
    v = _check("h_sgd_stochastic").run(quick=True, seed=0)
    assert v.status == "violated" and v.ok and v.counterexample["params"]["eps"] == 1e-3


def test_h_sgd_stochastic_refuses_points_outside_its_construction():
    with pytest.raises(InputError, match="eps"):
        C.h_sgd_stochastic(1.5)
    with pytest.raises(InputError, match="eta"):
        C.h_sgd_stochastic(0.5, eta=0.9)
