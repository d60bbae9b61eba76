"""Issue 21 for DeFedAvg: every `holds` bound check is searched over a family as wide as its hypotheses.

Worst ratios (seed 0, the check's full budget) and where the derivation puts the supremum (the families'
descriptions and ``LIMIT_INSTANCES`` in src/fltheory/papers/defedavg/checks.py say the same):

* tight (the supremum 1 is reached within 1e-6): lemma2 ((N + n - 1)/(2N) at n = N = 1e6), lemma4_step and
  lemma9_step_corrected (1 - 3/(4K^2) at K = 1e6, eta_bar at the edge of the condition), lemma6 and lemma1
  (1 - O(eta_bar L K) at round 0 as eta_bar L -> 0 with K >= 2; the samplers hold the instance at eta_bar L K ~ 1e-7);
* lemma8 / lemma10: 1/2 on convex clients (exactly 1/2 at K = 1: Young's inequality is the only loss), but
  0.9079 / 0.9048 on a non-convex quadratic client from its stationary point (supremum 0.9106 as K -> infinity);
* lemma9 / lemma9_corrected: (K - 1)/(4K) -> 1/4 on convex clients, 0.3113 / 0.2971 non-convex at K = 64; lemma4
  (one client of the non-IID family): 7/32 convex at K = 8, 0.2485 non-convex.  From w0 = 0 exactly (noise only) the
  non-convex ratios tend to 0.3210 / 0.3059 / 0.2974 (Lemma 8: 0.9106) as K -> infinity; at the samplers' smallest
  Phi0 the bounds' gradient term takes over and they peak (0.3129 / 0.2985 / 0.2892; 0.9081) and fall
  (test_nonconvex_drift_limits_are_noise_only, closed forms checked against the engine);
* descent_iid: 0.281 (delay 1, w0 = 0: the round-1 update still uses w^0, so the moved term K eta eta_bar/4
  ||grad F(w^1)||^2 adds to the noise's 1/4); descent_niid: 9(N + n - 1)/(64 N) -> 9/32 (every client lambda
  rounds behind, w0 = x*: derived in _descent_niid_constrain's docstring; 0.2811 at n = N = 1000);
* theorem1_general: z/(2 z_e (2 - z_e)) with both rates at their caps, no delay, no noise -> 0.3014 (0.2965 at the
  family's corner K = 8, T = 40, n = N = 1000); theorem1_corrected: (53/216 + 4 (5/54))/5 = 133/1080 with every
  client one round behind at the prescribed rates (0.1189 at the corner), theorem1 5/16 of it (derived in
  _niid_theorem_evaluate's docstring); under any delay distribution p on 0..lambda the limit is z (S + gamma)/10
  (exact.theorem1_delay_limit, checked against the engine), at most 133/1080: proved for lambda <= 4 (lambda = 1
  in closed form, lambda = 2, 3 by the Bernstein certificate here, lambda = 4 by the same function, 31 s), checked on
  grids for lambda = 5, 6; the other searches reach the values in REACH.
"""
import copy
import math
from fractions import Fraction as Fr

import mpmath
import numpy as np
import pytest

from fltheory.delayed import LocalSGD, RandomParticipation, random_participation_moments
from fltheory.papers.defedavg import checks as C
from fltheory.papers.defedavg import exact as X
from fltheory.verify import Check, Sample, rebuild, registry

# the full-budget search's worst ratio (seed 0), floored a little below the value it reached
REACH = {
    # Theorem 2: the derived 0.1766 (prescribed rates, T = 40) and 0.3016 (K = 8) of _iid_theorem_evaluate
    "theorem2_corrected": 0.175, "theorem2_general": 0.30, "descent_iid": 0.28, "lemma6": 1 - 1e-6,
    "lemma8": 0.5 - 1e-9, "lemma10": 0.5 - 1e-9, "lemma9": 0.22, "lemma9_corrected": 0.22,
    # the search alone (no search_start; the sampler's derived instance is not used by Check.search) gets within 1 %
    # of the derived 9 (2N - 1)/(64 N) = 0.28111 at the family's end N = 1000 (test_descent_niid_derived_supremum)
    "descent_niid": 0.2785,
    # Theorem 1: the family's corner, where _niid_theorem_evaluate's derivation puts its worst instance (the sups
    # 133/3456, 133/1080 and 0.3014 as the sizes grow; test_theorem1_search_alone_reaches_the_derived_worst)
    "theorem1": 0.0371, "theorem1_corrected": 0.1188, "theorem1_general": 0.2964, "lemma1": 0.9999,
    "lemma4": 0.15,                   # the sampler's derived non-convex instance reaches 0.2485 (LIMITS)
    "lemma5": 0.44, "lemma2": 1 - 1e-6, "lemma4_step": 1 - 1e-6, "lemma9_step_corrected": 1 - 1e-6,
}
TIGHT = ("lemma2", "lemma4_step", "lemma9_step_corrected", "lemma6", "lemma1")
# the samplers' derived instances (LIMIT_INSTANCES): the verdict's worst ratio in quick and full mode
LIMITS = {"lemma8": 0.9078, "lemma10": 0.9048, "lemma9": 0.3112, "lemma9_corrected": 0.2971, "lemma4": 0.2485}


def _check(name):
    return next(c for c in registry(["defedavg"]) if c.name == "defedavg." + name)


def test_every_holds_bound_check_is_searched():
    # identities (relation ==) and the checks expected violated are not searched; lemma3 keeps its own family
    # (tests/test_worst_case_checks.py)
    # the coverage checks' searches are tested in tests/test_defedavg_coverage.py
    from fltheory.papers.defedavg import checks_coverage as CC

    bounds = {c.name.split(".")[1] for c in registry(["defedavg"]) if c.relation != "==" and c.expected == "holds"}
    assert bounds == set(REACH) | {"lemma3"} | set(CC.SEARCH)
    for name in REACH:
        c = _check(name)
        assert c.family is not None and c.family.description and c.search_budget[:2] == C.SEARCH[name][2]


@pytest.mark.parametrize("name", sorted(REACH))
def test_full_search_reaches_the_stated_worst_ratio(name):
    c = _check(name)
    res = c.search(quick=False, seed=0)
    assert REACH[name] <= res.ratio <= 1 + c.rtol, (name, res.ratio, res.params)
    assert name != "descent_niid" or (c.search_start == () and res.ratio < 9 * 1999 / 64000)
    assert res.evaluations <= c.search_budget[1]
    r = rebuild(c, res.sample.params, res.sample.seed)           # from its parameters alone
    assert r.ratio == pytest.approx(res.ratio, rel=1e-12) and not r.violated


@pytest.mark.parametrize("name", TIGHT)
@pytest.mark.parametrize("quick", [True, False])
def test_tight_checks_are_tight(name, quick):
    v = _check(name).run(quick=quick, seed=0)
    assert v.status == "tight" and v.ok and v.expected == "holds", (name, v.worst_ratio)
    assert v.worst_ratio <= 1 + 1e-9


@pytest.mark.parametrize("name", TIGHT)
def test_a_planted_tightening_of_a_tight_check_is_violated(name):
    c = _check(name)

    def tightened(p):
        s = c.evaluate(p)
        return Sample(s.value, 0.9 * s.bound, s.params, s.seed, s.size)

    def sampler(quick, seed):
        return [Sample(s.value, 0.9 * s.bound, s.params, s.seed, s.size) for s in c.sampler(quick, seed)]

    planted = Check("defedavg.planted_" + name, paper="demo", relation="<=", sampler=sampler, family=c.family,
                    evaluate=tightened, search_budget=c.search_budget)
    v = planted.run(quick=True, seed=0)
    assert v.status == "violated" and v.counterexample["ratio"] > 1.05      # the smallest counterexample is kept
    assert rebuild(planted, v.counterexample["params"], v.counterexample["seed"]).violated


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_non_convex_clients_go_beyond_the_convex_supremum(name):
    v = _check(name).run(quick=True, seed=0)
    assert v.status == "holds" and LIMITS[name] <= v.worst_ratio < 1
    fam, ev, _ = C.SEARCH[name]
    s = ev(fam.apply(dict(C.LIMIT_INSTANCES[name])))
    assert rebuild(_check(name), s.params, None).ratio == pytest.approx(s.value / s.bound, rel=1e-9)


def test_round0_closed_form_matches_monte_carlo_on_a_non_convex_client():
    # E||g||^2 and the drift of n local runs of K noisy steps on f(w) = -w^2/2 (curvature -L, L = 1), by simulation
    p = C.SEARCH["lemma8"][0].apply(dict(C.LIMIT_INSTANCES["lemma8"], K=4, n=2, phi_frac=0.3))
    t = C._round0_terms(p, "lemma8")
    c = t["c"]
    rng = np.random.default_rng(0)
    M, n, K, eb = 400_000, c["n"], c["K"], c["eta_bar"]
    w0 = math.sqrt(c["Phi0"] * 2)                              # |a| w0^2/2 = Phi0, a = -1
    w = np.full((M, n), w0)
    g = np.zeros((M, n))
    drift = np.zeros(M)
    for _ in range(K):
        drift += ((w - w0) ** 2).mean(axis=1)
        step = -w + rng.normal(scale=math.sqrt(c["sigma2"]), size=(M, n))   # grad of -w^2/2 plus noise
        g += eb * step
        w = w - eb * step
    g_sq = float((g.mean(axis=1) ** 2).mean())
    assert g_sq == pytest.approx(t["g_sq"][0], rel=0.01)
    assert float(drift.mean()) == pytest.approx(t["drift"][0], rel=0.01)


def test_lemma8_is_one_half_at_K1_on_convex_clients():
    # K = 1: E||g||^2 = eta_bar^2 (Y + sigma^2/n) and the bound is twice that, whatever the instance
    fam, ev, _ = C.SEARCH["lemma8"]
    for seed in range(3):
        raw = fam.draw(np.random.default_rng(seed))
        s = ev(fam.apply({**raw, "K": 1, "clients": "convex"}))
        assert s.value / s.bound == pytest.approx(0.5, rel=1e-9)


def test_rounds_below_double_precision_are_left_out():
    # E||w^t - w^{t-1}||^2 ~ 2.5e-5 against E||w||^2 ~ 4e8: lag_msd's cancellation made ratios 0.4978 .. 0.5025
    fam, ev, _ = C.SEARCH["lemma10"]
    p = fam.apply(dict(d=2, L=100.0, a2=0.001, theta=1.5708, N=7, n=5, K=1, lam=1, D=1, delay="constant", T=26,
                       sigma2_factor=1e4, phi_frac=100.0, rates="free", u_bar=1.0, u_prod=0.001, clients="convex"))
    with pytest.raises(Exception, match="double precision"):
        ev(p)
    s = ev({**p, "phi_frac": 1e-3})                             # resolved: Young's 1/2 at K = 1
    assert s.value / s.bound == pytest.approx(0.5, abs=1e-6)


def lemma8_noise_ratio(K, x):
    """Lemma 8 on a non-convex client from its stationary point, noise only (w0 = 0), q = 1 + x/K with
    x = eta_bar L K: E||g||^2 / bound = sum_m q^{2m} / (2K + 2 sum_m (q^m - 1)^2)."""
    q = 1 + x / K
    m = np.arange(K)
    return float((q ** (2 * m)).sum() / (2 * K + 2 * ((q**m - 1) ** 2).sum()))


def test_lemma8_non_convex_supremum_formula():
    ratio = lemma8_noise_ratio
    fam, ev, _ = C.SEARCH["lemma8"]
    s = ev(fam.apply(dict(C.LIMIT_INSTANCES["lemma8"])))         # K = 64, eta_bar L K = 1.069
    # the family's smallest Phi0 (phi_frac = 1e-6) leaves a signal of ~0.3% of the noise in g: ratio 0.1% lower
    assert ratio(64, 1.069) * (1 - 2e-3) < s.value / s.bound < ratio(64, 1.069)
    big = max(ratio(10**5, x) for x in np.linspace(1.0, 1.15, 31))
    assert 0.9105 < big < 0.9107 and ratio(64, 1.069) < big      # the K -> infinity supremum 0.9106


# Lemmas 4, 9 and 8 on the non-convex client of LIMIT_INSTANCES: eta_bar L K = c, the bound's constant before
# K^3 eta_bar^2 ||grad F||^2 (Lemma 4: 16, Lemma 9: 12; Lemma 8 has none)
_NC = {"lemma4": (mpmath.mpf(1) / 4, 16), "lemma9": (1 / (2 * mpmath.sqrt(2)), 12),
       "lemma9_corrected": (1 / (2 * mpmath.sqrt(3)), 12), "lemma8": (mpmath.mpf("1.069"), None)}


def nonconvex_round0_ratio(name, K, phi_frac=1e-6, u=1):
    """The ratio of Lemma 4, 9 or 8 at round 0 on one client F = -L w^2/2 (n = 1, nu^2 = 0, no staleness), from
    w0 with w0^2 L^2/sigma^2 = r = 20 phi_frac (Phi0 = 10 phi_frac sigma^2/L, _round0_terms), eta_bar = u c/(L K),
    in closed form (units sigma^2/L^2; q = 1 + eta_bar L, A = sum_{k<K} q^2k, S = sum_{k<K} q^k):
    drift = r (A - 2S + K) + eta_bar^2 L^2 (A - K)/(q^2 - 1) against 2 c^2 u^2 (1 + coef K r/2) (Lemmas 4 and 9);
    E g^2 = r (q^K - 1)^2 + eta_bar^2 L^2 A against 2 eta_bar^2 L^2 K + 2 r (q^K - 1)^2 + 2 eta_bar^2 L^2 (A - 2S + K)
    (Lemma 8: 2 K eta_bar^2 sigma^2 + 2 eta_bar^2 Y^0, eta_bar L S_m = q^m - 1)."""
    with mpmath.workdps(40):
        c, coef = _NC[name]
        e = u * c / K                                       # eta_bar L
        r = 20 * mpmath.mpf(phi_frac)
        q = 1 + e
        A, S = (q ** (2 * K) - 1) / (q * q - 1), (q**K - 1) / (q - 1)
        if coef is None:
            P = (q**K - 1) ** 2
            return float((r * P + e * e * A) / (2 * e * e * K + 2 * r * P + 2 * e * e * (A - 2 * S + K)))
        return float((r * (A - 2 * S + K) + e * e * (A - K) / (q * q - 1)) / (2 * (u * c) ** 2 * (1 + coef * K * r / 2)))


@pytest.mark.parametrize("name,K", [("lemma4", 8), ("lemma4", 64), ("lemma4", 256), ("lemma9", 64),
                                    ("lemma9_corrected", 256), ("lemma8", 64), ("lemma8", 256)])
def test_nonconvex_limit_instances_closed_form(name, K):
    # the engine (_round0_terms) against the closed form, at and beyond the instance's K: no round-off at large K
    fam, ev, _ = C.SEARCH[name]
    s = ev(fam.apply(dict(C.LIMIT_INSTANCES[name], K=K)))
    assert s.value / s.bound == pytest.approx(nonconvex_round0_ratio(name, K), rel=1e-11)
    assert C.LIMIT_INSTANCES[name]["phi_frac"] == 1e-6


@pytest.mark.parametrize("name", ["lemma4", "lemma9", "lemma9_corrected"])
def test_nonconvex_drift_limits_are_noise_only(name):
    """From w0 = 0 (noise only) the ratio tends to ((e^2c - 1)/(2c) - 1)/(4c) as K -> infinity (Lemma 4:
    2 (e^(1/2) - 1) - 1); at the samplers' smallest Phi0 the bound's gradient term (coef/2 r K times its noise
    term) takes over: the ratio peaks and falls to int_0^1 (e^(cx) - 1)^2 dx/(coef c^2).  The family's
    description quotes these numbers."""
    c, coef = (float(v) if v is not None else v for v in _NC[name])
    noise_lim = ((math.exp(2 * c) - 1) / (2 * c) - 1) / (4 * c)
    signal_lim = ((math.exp(2 * c) - 1) / (2 * c) - 2 * (math.exp(c) - 1) / c + 1) / (coef * c * c)
    assert nonconvex_round0_ratio(name, 10**7, phi_frac=0) == pytest.approx(noise_lim, abs=1e-6)
    assert nonconvex_round0_ratio(name, 10**10) == pytest.approx(signal_lim, rel=1e-3)
    ks = range(32, 257)
    ratios = [nonconvex_round0_ratio(name, K) for K in ks]
    peak = max(ratios)
    k_peak = ks[ratios.index(peak)]
    assert nonconvex_round0_ratio(name, 2048) < nonconvex_round0_ratio(name, 512) < peak < noise_lim
    assert all(nonconvex_round0_ratio(name, k_peak, u=u) < peak for u in (0.5, 0.9, 0.99))   # u = 1 is the worst
    text = C.SEARCH[name][0].description
    for x in (noise_lim, peak):
        assert f"{x:.4f}" in text, (name, x)
    assert f"(K = {k_peak}" in text
    if name == "lemma4":
        assert math.isclose(noise_lim, 2 * (math.sqrt(math.e) - 1) - 1)
        assert f"{nonconvex_round0_ratio(name, 8):.4f} at K = 8" in text
        assert f"{nonconvex_round0_ratio(name, 512):.4f} at K = 512" in text
    else:
        assert f"{nonconvex_round0_ratio(name, 64):.4f} at K = 64" in text


def test_lemma8_nonconvex_limit_is_noise_only():
    # the closed form is lemma8_noise_ratio from w0 = 0; at phi_frac = 1e-6 the signal (1 - q^K)^2 w0^2, against
    # noise terms O(1/K), pulls the ratio to 1/2 as K -> infinity: it peaks at 0.9081 (K = 94) and falls
    assert nonconvex_round0_ratio("lemma8", 64, phi_frac=0) == pytest.approx(lemma8_noise_ratio(64, 1.069), rel=1e-12)
    assert nonconvex_round0_ratio("lemma8", 10**5, phi_frac=0) == pytest.approx(0.91058, abs=1e-5)
    assert nonconvex_round0_ratio("lemma8", 10**10) == pytest.approx(0.5, abs=1e-3)
    ratios = {K: nonconvex_round0_ratio("lemma8", K) for K in range(64, 129)}
    k_peak = max(ratios, key=ratios.get)
    assert k_peak == 94 and round(ratios[k_peak], 4) == 0.9081
    assert nonconvex_round0_ratio("lemma8", 2048) < nonconvex_round0_ratio("lemma8", 512) < ratios[k_peak]


def test_descent_niid_with_every_client_lambda_rounds_behind_goes_beyond_one_quarter():
    # (39) from w0 = x* (noise only), eta eta_bar at the cap 1/(4 L K lambda) of (11), K = 1, n = N = 64 and a
    # constant delay lambda (Assumption 4 allows it): the round-lambda update still starts from w0 while the moved
    # term K eta eta_bar/4 E||grad F(w^t)||^2 has grown with the noise of the earlier rounds (the referees' 0.262
    # and 0.278 lie here); i.i.d. uniform delays stay below 1/4
    p = dict(d=1, N=64, n=64, K=1, lam=2, delay="constant", T=4, dir_seed=0, rates="any", L=1.0, b_scale=1e-4,
             sigma2=1e6, phi_frac=1e-6, u1=1e-3, u2=1.0, G2_factor=1e-9)
    s = C._niid_round_evaluate(p, "descent_niid")
    assert 0.278 < s.value / s.bound < 0.279 and s.params["round"] == 2
    uniform = C._niid_round_evaluate({**p, "delay": "uniform"}, "descent_niid")
    assert uniform.value / uniform.bound < 0.25
    # the search family's mixture at stale = 1 is the constant delay, at stale = 0 the uniform one
    fam, ev, _ = C.SEARCH["descent_niid"]
    q = dict(C.LIMIT_INSTANCES["descent_niid"], N=64, lam=2, T=4, sigma2=1e6, phi_frac=1e-6, u1=1e-3)
    assert ev(fam.apply(q)).value == pytest.approx(s.value, rel=1e-9)
    assert ev(fam.apply({**q, "stale": 0.0})).value == pytest.approx(uniform.value, rel=1e-9)


@pytest.mark.parametrize("N,K,lam", [(200, 1, 1), (1000, 3, 2), (500, 2, 3)])
def test_descent_niid_derived_supremum(N, K, lam):
    # _descent_niid_constrain's derivation: with every client lambda rounds behind, w0 = x*, eta_bar L -> 0 and
    # eta eta_bar at the cap of (11), the ratio of (39) (negative terms moved) at round lambda is 9 rho/64 with
    # rho = (N + n - 1)/N, whatever K and lambda; G^2 and eta_bar > 0 lower it by O(1/n) and O(u1^2 n)
    fam, ev, _ = C.SEARCH["descent_niid"]
    p = fam.apply(dict(C.LIMIT_INSTANCES["descent_niid"], N=N, K=K, lam=lam, T=lam + 2))
    s = ev(p)
    rho = (2 * N - 1) / N
    assert s.params["round"] == lam and s.value / s.bound == pytest.approx(9 * rho / 64, rel=2e-3)
    assert s.value / s.bound < 9 * rho / 64 < 9 / 32
    # the next round is lower: rho (9/16 - z/2 + z^2/2)/4 with z = 1/(4 lambda) (noise only)
    z = 1 / (4 * lam)
    assert 9 * rho / 64 > rho * (9 / 16 - z / 2 + z * z / 2) / 4
    # a delay spread over 0..lambda, a signal in w0 or n < N only lower it
    for change in (dict(stale=0.5), dict(phi_frac=1e-3), dict(n_frac=0.5)):
        other = ev(fam.apply({**p, **change}))
        assert other.value / other.bound < s.value / s.bound, change


def _theorem2_signal_ratio(K, u_bar=1.0):
    # _iid_theorem_evaluate's derivation: z = 1/4, c = eta_bar L K = u_bar/(4 sqrt3), z_e = z (1 - (1 - c/K)^K)/c
    c = u_bar / (4 * math.sqrt(3))
    ze = 0.25 * (1 - (1 - c / K) ** K) / c
    return ze, 0.25 / (2 * ze * (2 - ze))


@pytest.mark.parametrize("K", [1, 3, 8])
def test_theorem2_general_derived_worst(K):
    # noise small against Phi0 (phi_frac = 100: Phi0 = 1000 sigma^2/L), zero delay, both rates at the caps of
    # (13): the exact ratio is z/(2 z_e (2 - z_e)) times 1 - (1 - z_e)^(2T), less the bound's noise terms (< 1 %)
    fam, ev, _ = C.SEARCH["theorem2_general"]
    T = 40
    s = ev(fam.apply(dict(d=1, L=0.5, a2=1.0, theta=0.0, N=1, n=1, K=K, lam=1, D=0, delay="constant", T=T,
                          sigma2_factor=1.0, phi_frac=100.0, rates="any", u_bar=1.0, u_prod=1.0)))
    ze, sup = _theorem2_signal_ratio(K)
    signal = sup * (1 - (1 - ze) ** (2 * T))
    assert 0.99 * signal < s.value / s.bound < signal
    assert _theorem2_signal_ratio(8)[1] < _theorem2_signal_ratio(10**6)[1] < 0.3039     # the K -> infinity sup


def test_theorem2_corrected_derived_worst_k1():
    # K = 1, zero delay, Phi0 at its cap of (13) (z = eta eta_bar L = 1/4): E w_t^2 = (1 - z)^(2t) w0^2 +
    # h^2 sigma^2/n sum_{j<t} (1 - z)^(2j) exactly, against the corrected bound; about (2/7 + 1/14)/2 as T grows
    fam, ev, _ = C.SEARCH["theorem2_corrected"]
    T, L = 40, 0.5
    p = fam.apply(dict(d=1, L=L, a2=1.0, theta=0.0, N=3, n=2, K=1, lam=1, D=0, delay="constant", T=T,
                       sigma2_factor=1e4, phi_frac=7.0, rates="prescribed", u_bar=1.0, u_prod=1.0))
    assert p["phi_frac"] == 1.0                             # Phi0 above its cap is mapped onto it
    s = ev(p)
    h = s.params["eta"] * s.params["eta_bar"]
    z = h * L
    assert z == pytest.approx(0.25, rel=1e-12)
    w0 = 2 * s.params["Phi0"] / L
    ew2 = [(1 - z) ** (2 * t) * w0 + h * h * s.params["sigma2_used"] / p["n"] * sum((1 - z) ** (2 * j)
           for j in range(t)) for t in range(T)]
    assert s.value == pytest.approx(L * L * sum(ew2) / T, rel=1e-9)
    assert 0.176 < s.value / s.bound < (2 / 7 + 1 / 14) / 2


# ----------------------------------------------------------------------------- Theorem 1 (_niid_theorem_evaluate)
def _theorem1_signal_ratio(K, T, n, z=0.25, c=0.125):
    # _niid_theorem_evaluate: rho_s (1 - (1 - z_e)^(2T))/(1 + 4 z^2 T/n), noise-free identical clients, no delay
    ze = z * (1 - (1 - c / K) ** K) / c
    return z / (2 * ze * (2 - ze)) * (1 - (1 - ze) ** (2 * T)) / (1 + 4 * z * z * T / n)


@pytest.mark.parametrize("K,T,N", [(1, 40, 1000), (8, 14, 1000), (3, 7, 50)])
def test_theorem1_general_derived_worst(K, T, N):
    fam, ev, _ = C.SEARCH["theorem1_general"]
    raw = {**fam.corner(1), "d": 1, "K": K, "T": T, "N": N}
    s = ev(fam.apply(raw))
    assert s.value / s.bound == pytest.approx(_theorem1_signal_ratio(K, T, N), rel=1e-8)
    assert s.params["G2"] == pytest.approx(2 * raw["L"] * s.params["Phi0"], rel=1e-8)     # G^2 = ||grad F(w0)||^2
    # a delay, lambda > 1, noise, client heterogeneity or a rate below its cap only lower it
    for change in (dict(delay="uniform"), dict(delay="constant"), dict(lam=2), dict(phi_frac=1e2), dict(homog=0.2),
                   dict(u2=0.5), dict(d=2, a_ratio=0.3)) + ((dict(u1=0.3),) if K > 1 else ()):   # K = 1: z_e = z
        other = ev(fam.apply({**raw, **change}))
        assert other.value / other.bound < s.value / s.bound, change
    # the supremum as K, T and n/T grow, and the family's best T at K = 8, n = 1000
    assert 0.3013 < _theorem1_signal_ratio(10**6, 10**4, 10**12) < 0.3014
    assert max(range(1, 41), key=lambda t: _theorem1_signal_ratio(8, t, 1000)) == 14


def _theorem1_prescribed_k1(N, T, L, sigma2, D=1, lam=1, p=None):
    """Theorem 1 at its prescribed rates, K = 1, n = N, every client D rounds behind (or, with ``p``, each client's
    delay i.i.d. P(D = k) = p_k on 0..lam, averaged over the n draws: the n = N -> infinity limit of the update),
    Phi0 at its cap of (11), identical clients, in closed form: y_{t+1} = y_t - z sum_k p_k y_{t-k} - e_t
    (z = eta eta_bar L, e_t of variance rho h^2 sigma^2/n, rho = (2N - 1)/N: draws with replacement share their
    noise), its mean and the covariance of (y_t, ..., y_{t-lam}) propagated exactly; G^2 = L^2 max_t E y_t^2, on
    which the rates depend, so the fixed point is iterated.  Returns (value, G^2, Phi0, z)."""
    n, G, rho = N, 0.0, (2 * N - 1) / N
    p = np.eye(lam + 1)[D] if p is None else np.asarray(p, float)
    for _ in range(200):
        S = 2 * sigma2 + max(G, 32 * L / T - 2 * sigma2)                # (C1): T >= 32 L/(2 sigma^2 + G^2)
        Phi0 = min(T * S / (32 * n * L * lam**2),                         # the cap of (C2)
                   T * S**3 / (32 * n * L * lam**2 * (2 * sigma2 + (S - 2 * sigma2) * lam) ** 2))
        h = math.sqrt(4 * n * Phi0) / math.sqrt(2 * L * S * T)
        z = h * L
        A = np.eye(lam + 1, k=-1)
        A[0] -= z * p
        A[0, 0] += 1.0
        x, P, m = np.full(lam + 1, math.sqrt(2 * Phi0 / L)), np.zeros((lam + 1, lam + 1)), []
        noise = np.zeros((lam + 1, lam + 1))
        noise[0, 0] = rho * h * h * sigma2 / n
        for t in range(T + 1):
            m.append(x[0] ** 2 + P[0, 0])
            x, P = A @ x, A @ P @ A.T + noise
        G_new, G_used = L * L * max(m), S - 2 * sigma2
        if abs(G_new - G_used) <= 1e-13 * G_new:
            break
        G = G_new
    return L * L * float(np.mean(m[:T])), G_used, Phi0, z


@pytest.mark.parametrize("N,T,D", [(1000, 40, 1), (100, 20, 0), (30, 10, 1)])
def test_theorem1_prescribed_derived_worst(N, T, D):
    fam, ev, _ = C.SEARCH["theorem1_corrected"]
    raw = {**fam.corner(1), "d": 1, "K": 1, "N": N, "T": T, "delay": ("zero", "constant")[D]}
    assert fam.corner(1)["delay"] == "constant" and fam.corner(1)["lam"] == 1
    s = ev(fam.apply(raw))
    value, G2, Phi0, z = _theorem1_prescribed_k1(N, T, raw["L"], raw["sigma2"], D)
    assert z == pytest.approx(0.25, rel=1e-12)                            # Phi0 at its cap: eta eta_bar K L = 1/4
    assert s.value == pytest.approx(value, rel=1e-6) and s.params["Phi0"] == pytest.approx(Phi0, rel=1e-6)
    assert G2 <= s.params["G2"] <= G2 * (1 + 1e-3)                         # the engine's G^2 (with a hair of spread)
    bound = float(C.B.theorem1_corrected(n=N, K=1, T=T, L=raw["L"], sigma2=raw["sigma2"], Phi0=Phi0, lam=1,
                                         nu2=0.0, G2=G2, N=N, check=False))
    assert s.value / s.bound == pytest.approx(value / bound, rel=1e-5)
    assert s.value / s.bound < (133 / 1080 if D else 4 / 35)
    # the printed constant 16 for 5: 5/16 of it (the second term of the bound is negligible here)
    printed = C.SEARCH["theorem1"][1](fam.apply(raw))
    assert printed.value / printed.bound == pytest.approx(5 / 16 * s.value / s.bound, rel=1e-4)
    # K makes no difference at eta_bar L K -> 0; lambda > 1, a smaller Phi0, heterogeneity lower it, and so does
    # a delay spread over 0..lambda against every client one round behind
    k8 = ev(fam.apply({**raw, "K": 8}))
    assert k8.value / k8.bound == pytest.approx(s.value / s.bound, rel=1e-4)
    for change in (dict(lam=2), dict(phi_frac=0.3), dict(homog=0.0)) + ((dict(delay="uniform"),) if D else ()):
        other = ev(fam.apply({**raw, **change}))
        assert other.value / other.bound < s.value / s.bound, change


def test_theorem1_prescribed_supremum():
    # no delay: (2/7 + 4/14)/5 = 4/35; every client one round behind: (53/216 + 4 (5/54))/5 = 133/1080, as
    # n = N >> T -> infinity (closed form only)
    y = [(1 + t / 2) / 2**t for t in range(200)]                 # y_{t+1} = y_t - y_{t-1}/4, y_{-1} = y_0 = 1
    assert sum(v * v for v in y) == pytest.approx(53 / 27, rel=1e-12)

    def ratio(N, T, D):
        v, G, P, _ = _theorem1_prescribed_k1(N, T, 1.0, 1e8, D)
        return v / float(C.B.theorem1_corrected(n=N, K=1, T=T, L=1.0, sigma2=1e8, Phi0=P, lam=1, nu2=0.0, G2=G, N=N,
                                                check=False))

    for D, sup in ((0, 4 / 35), (1, 133 / 1080)):
        r = [ratio(N, T, D) for N, T in ((10**3, 40), (10**4, 400), (10**6, 3000))]
        assert r[0] < r[1] < r[2] < sup and r[2] > 0.999 * sup, (D, r)


def test_theorem1_search_alone_reaches_the_derived_worst():
    # no search_start: the family's corner(1) is the derived instance; the search gets within 4 % of each supremum
    # (133/3456, 133/1080, 0.3014) and within 1 % of the family's best known instance
    sup = {"theorem1": 133 / 3456, "theorem1_corrected": 133 / 1080, "theorem1_general": 0.30137}
    best = {"theorem1": 5 / 16 * 0.118858, "theorem1_corrected": 0.118858, "theorem1_general": 0.298242}
    for name in sup:
        c = copy.copy(_check(name))
        c.search_start = ()         # (theorem1_general has the deep search's instance as a start: left out here)
        res = c.search(quick=True, seed=0)
        assert 0.96 * sup[name] < res.ratio < sup[name] and res.ratio > 0.99 * best[name], (name, res.ratio)


# delay distributions on 0..lam: a mixture, a sparse one, every client lam rounds behind
DELAY_POINTS = [(2, (Fr(1, 2), Fr(1, 4), Fr(1, 4))), (3, (Fr(1, 10), 0, Fr(3, 5), Fr(3, 10))), (2, (0, 0, 1))]


@pytest.mark.parametrize("lam,p", DELAY_POINTS)
def test_theorem1_delay_limit_sums_match_the_engine(lam, p):
    # the exact engine (i.i.d. delays with these p, n = N = 2000 draws with replacement, K = 1, z = 1/(4 lam)):
    # sum_t E y_t^2 from y_0 = 1 (history y_0, no noise) is S; the stationary E y^2 from y_0 = 0 with noise is
    # rho h^2 sigma^2/n gamma.  The delays' spread over the draws adds O(1/n) (exactly nothing for one delay)
    N, T, z = 2000, 400, 1 / (4 * lam)
    part, local = RandomParticipation.with_replacement(N=N, n=N), LocalSGD(eta_local=0.1, K=1)

    def run(sigma2, y0):
        fed = X.niid_federation(a=[1.0], b=np.zeros((N, 1)), sigma2=sigma2)
        return np.asarray(random_participation_moments(fed, local, eta=z / 0.1, T=T, x0=np.full(1, y0),
                                                       participation=part, delay_probs=np.asarray(p, float)).grad_sq)
    d = X.theorem1_delay_limit(lam, p)
    assert run(0.0, 1.0).sum() == pytest.approx(float(d.S), rel=2e-5)
    assert run(1.0, 0.0)[-1] / ((2 * N - 1) / N * z * z / N) == pytest.approx(float(d.gamma), rel=2e-5)
    z = Fr(1, 4 * lam)
    assert d.ratio == z * (d.S + d.gamma) / 10 and d.signal == z * d.S / 2 and d.noise == z * d.gamma / 8


def test_theorem1_delay_limit_is_the_limit_of_the_ratio():
    # no delay 4/35, every client one round behind 133/1080 (53/216 + 4 (5/54))/5, exactly
    assert (X.theorem1_delay_limit(1, (1, 0)).ratio, X.theorem1_delay_limit(1, (0, 1)).ratio) == (Fr(4, 35),
                                                                                                  Fr(133, 1080))
    assert (X.theorem1_delay_limit(1, (0, 1)).signal, X.theorem1_delay_limit(1, (0, 1)).noise) == (Fr(53, 216),
                                                                                                   Fr(5, 54))
    # the check's own instance (every client lam = 2 rounds behind) is the closed form at finite N, T ...
    fam, ev, _ = C.SEARCH["theorem1_corrected"]
    raw = {**fam.corner(1), "d": 1, "K": 1, "N": 1000, "T": 40, "lam": 2, "delay": "constant"}
    s = ev(fam.apply(raw))
    value, G2, Phi0, z = _theorem1_prescribed_k1(1000, 40, raw["L"], raw["sigma2"], D=2, lam=2)
    # (z is a hair below 1/(4 lam): (11)'s second cap binds at lam > 1 while G^2 > 0; -> 1/(4 lam) as G^2/sigma^2 -> 0)
    assert 0.999 / 8 < z < 1 / 8 and s.value == pytest.approx(value, rel=1e-6)

    def ratio(N, T, lam, p):
        v, G, P, _ = _theorem1_prescribed_k1(N, T, 1.0, 1e8, lam=lam, p=p)
        return v / float(C.B.theorem1_corrected(n=N, K=1, T=T, L=1.0, sigma2=1e8, Phi0=P, lam=lam, nu2=0.0, G2=G,
                                                N=N, check=False))
    # ... and the ratio rises to theorem1_delay_limit as n = N and T grow with n/T (0.9989 of it at N = 10^6, T = 3000)
    for lam, p in DELAY_POINTS:
        lim = float(X.theorem1_delay_limit(lam, p).ratio)
        r = [ratio(N, T, lam, np.asarray(p, float)) for N, T in ((10**3, 40), (10**4, 400))
             + (((10**6, 1500),) if lam == 3 else ())]
        assert all(a < b for a, b in zip(r, r[1:])) and r[-1] < lim, (lam, p, r, lim)
        assert r[-1] > (0.997 if lam == 3 else 0.993) * lim, (lam, p, r, lim)


def test_theorem1_delay_limit_is_largest_one_round_behind():
    # lam = 1: r(1, (1 - q, q)) = (q^3 - 4 q^2 + 8 q + 128)/(40 (4 - q)(7 + 2 q)), increasing (its derivative's
    # numerator 48 + 144 q + 48 q^2 + q^3 - q^4 > 0 on [0, 1]): the maximum 133/1080 at q = 1
    rs = [X.theorem1_delay_limit(1, (1 - q, q)).ratio for q in (Fr(j, 16) for j in range(17))]
    for j, r in enumerate(rs):
        q = Fr(j, 16)
        assert r == (q**3 - 4 * q**2 + 8 * q + 128) / (40 * (4 - q) * (7 + 2 * q))
    assert all(a < b for a, b in zip(rs, rs[1:])) and rs[-1] == Fr(133, 1080)
    # the Bernstein certificates: r <= 133/1080 on the whole simplex at lam = 1 (touching at delta_1), r < 133/1080
    # at lam = 2, 3 (lam = 4 takes 20 s: see theorem1_delay_certificate)
    assert X.theorem1_delay_certificate(1)[1:] == (0, 29160)
    for lam in (2, 3):
        deg, num, den = X.theorem1_delay_certificate(lam)
        assert deg == lam + 2 and num > 0 and den > 0
    # lam = 1..6 on grids of the simplex (step 1/(24, 12, 8, 6, 5, 4)): the largest value is at delta_lam (every
    # client lam rounds behind), and these fall with lam, at least 0.0104 below 133/1080 from lam = 2 on
    top = []
    for lam, m in ((1, 24), (2, 12), (3, 8), (4, 6), (5, 5), (6, 4)):
        grid = [c for c in np.ndindex(*(m + 1,) * lam) if sum(c) <= m]
        vals = {c: X.theorem1_delay_limit(lam, np.array((m - sum(c),) + c) / m).ratio for c in grid}
        assert max(vals, key=vals.get) == (0,) * (lam - 1) + (m,), lam
        top.append(X.theorem1_delay_limit(lam, (0,) * lam + (1,)).ratio)
    assert top[0] == Fr(133, 1080) and all(a > b for a, b in zip(top, top[1:]))
    assert float(top[1]) < 133 / 1080 - 0.0104
