"""The numbers and verdicts docs/papers/tdma.rst states, each rebuilt from a fresh run (tests/docsfrag.py).

FRAGMENTS quote the checks' verdicts (a full run of exactly the checks they name, about 17 s of CPU) and
what the package computes outside a verdict (the timing closed forms, an instance of a check's sampler);
CLAIMED are the page's words "holds", "tight", "violated" about the checks it names."""
import math

import pytest

from fltheory.papers.tdma import bounds as B
from fltheory.papers.tdma import checks as TC
from fltheory.papers.tdma import timing as tm

from docsfrag import assert_page, ce_param, page, render_all, verdicts

PAGE = page("papers/tdma.rst")
T = "tdma."
MNIST_S = (1, 5, 10, 25, 50, 100)
FRAGMENTS = (
    r"for the MNIST channel :math:`\alpha^*={{mnist_alpha}}` for :math:`S=1,5,10,25,50,100`",
    r":math:`T=10^5` plus one (the models :math:`\mathbf w_0,\dots,\mathbf w_K`): {{table1}} for "
    r":math:`S=1,2,5,10,20` (``tdma.table1``).",
    r"(28) reaches {{ratio:tdma.lemma4_28}} on exact runs",
    r"Lemma 3' reaches {{ratio:tdma.lemma3_corrected}}, its supremum",
    r"and Theorem 1' is tight (the search's worst instance: :math:`N=S={{param:tdma.theorem1_corrected:N}}`, "
    r":math:`K={{param:tdma.theorem1_corrected:K}}`, :math:`\eta L={{etaL}}`).",
    r"At :math:`N={{param:tdma.tau_async_printed:N}}`, :math:`S={{param:tdma.tau_async_printed:S}}`, "
    r":math:`\tau^{\rm comp}={{param:tdma.tau_async_printed:tau_comp}}`, :math:`r={{param:tdma.tau_async_printed:r}}`",
    r"a round takes {{value:tdma.tau_async_printed}} slots on average, (10) says {{bound:tdma.tau_async_printed}},",
    r"At :math:`N={{param:tdma.khat_idfl:N}}`, :math:`S={{param:tdma.khat_idfl:S}}`, "
    r":math:`\alpha={{param:tdma.khat_idfl:alpha}}`, :math:`k={{last:tdma.khat_idfl:k}}` the devices use "
    r":math:`\mathbf w_{{value:tdma.khat_idfl}}` where (31) says :math:`\mathbf w_{{bound:tdma.khat_idfl}}`;",
    r":math:`N={{param:tdma.rounds_loop_bound:N}}`, :math:`S={{param:tdma.rounds_loop_bound:S}}`, "
    r":math:`\tau^{\rm comp}={{param:tdma.rounds_loop_bound:tau_comp}}`, :math:`r={{param:tdma.rounds_loop_bound:r}}`, "
    r":math:`T={{param:tdma.rounds_loop_bound:T}}`: {{value:tdma.rounds_loop_bound}} rounds end by slot "
    r"{{param:tdma.rounds_loop_bound:T}} (at slots {{ends}}), the bound says {{bound:tdma.rounds_loop_bound}}.  "
    r"On Table I's channel with :math:`S=1` it says {{table_loop:bound}} where {{table_loop:rounds}} rounds end.",
    r"(:math:`\sigma={{param:tdma.assumption2_minibatch:sigma}}`, :math:`M=1`, "
    r":math:`B={{param:tdma.assumption2_minibatch:B}}`, "
    r":math:`\|\nabla f_n\|^2={{param:tdma.assumption2_minibatch:grad_norm2}}`) has second moment "
    r"{{value:tdma.assumption2_minibatch}} against the bound {{bound:tdma.assumption2_minibatch}}; over the random "
    r"quadratics the ratio reaches {{worstratio:tdma.assumption2_minibatch}}.",
    r":math:`N=S={{param:tdma.lemma1:N}}`, :math:`\eta={{param:tdma.lemma1:eta}}`, :math:`\mathbf w_0=1`: "
    r":math:`f(\mathbf w_1)={{value:tdma.lemma1}}` against the bound {{bound:tdma.lemma1}}.",
    r"(:math:`\Gamma={{param:tdma.lemma2:Gamma}}`), :math:`\mathbf w_0=2`, :math:`\eta={{param:tdma.lemma2:eta}}`: "
    r"in round {{param:tdma.lemma2:k}} the device with :math:`c_n=-1` sends its gradient at :math:`\mathbf w_0`, of "
    r"squared norm {{value:tdma.lemma2}}, against the bound {{bound:tdma.lemma2}}.",
    r"On the same round robin, in round {{param:tdma.lemma3:k}}, the drift is {{value:tdma.lemma3}} against "
    r"{{bound:tdma.lemma3}}; over the random quadratics the ratio reaches {{worstratio:tdma.lemma3}}.",
    r":math:`\mathbb Ef(\mathbf w_1)={{value:tdma.round_descent}}` against {{bound:tdma.round_descent}}, and (26) "
    r"at :math:`K={{param:tdma.summed_descent:horizon}}` a left side of {{value:tdma.summed_descent}} against a "
    r"right side of {{bound:tdma.summed_descent}}.",
    r"synchronous, :math:`N=S={{param:tdma.theorem1:N}}`, :math:`f_n=f=w^2/2`, :math:`\mathbf w_0=1`, "
    r":math:`M=B=1`, :math:`\sigma=\Gamma=0`, :math:`K={{param:tdma.theorem1:K}}`: the step "
    r":math:`\eta=\beta/\sqrt{K+1}` = {{param:tdma.theorem1:eta}} makes gradient descent diverge (average squared "
    r"gradient {{value:tdma.theorem1}}), while the bound is negative, {{bound:tdma.theorem1}};",
    r":math:`K={{rr:K}}`, :math:`\eta` = {{rr:eta}}: {{rr:value}} against {{rr:bound}} (ratio {{rr:ratio}}).",
    r"the average squared gradient tends to :math:`(1-e^{-2})/2={{rate_limit}}`: :math:`\sqrt K` times it is "
    r"{{rate:10000}} at :math:`K=10^4` and {{rate:1000000}} at :math:`K=10^6`, beyond any constant (against the "
    r"constant of the paper's own derivation, {{order_constant}} here, the ratio is {{rate_ratio:10000}} and "
    r"{{rate_ratio:1000000}}).",
)
CLAIMED = {
    **{T + n: "holds" for n in ("staleness", "staleness_idfl", "staleness_general", "end_times", "tau_async",
                                "prop1_condition", "prop1_alpha", "staleness_sum", "update_rule", "table1",
                                "lemma4_28", "lemma4_exact", "lemma3_corrected", "khat_idfl_corrected",
                                "theorem1_order")},
    **{T + n: "tight" for n in ("lemma4_27", "lemma1_corrected", "lemma2_corrected", "theorem1_corrected",
                                "smoothness_descent", "assumption2_minibatch_corrected")},
    **{T + n: "violated" for n in ("tau_async_printed", "staleness_printed", "khat_idfl", "rounds_loop_bound",
                                   "assumption2_minibatch", "lemma1", "lemma2", "lemma3", "round_descent",
                                   "summed_descent", "theorem1", "theorem1_rate")},
}


def _rr(what):
    """Theorem 1's round-robin counterexample (S = 1, N = 50, c_n = +-1, K = 200) of the check's sampler."""
    s = next(s for s in TC._theorem1_printed_samples(True, 0) if s.params["S"] == 1)
    return {"value": s.value, "bound": s.bound, "ratio": s.value / s.bound}.get(what, s.params.get(what))


def _rate(K):
    """sqrt(K) times the average squared gradient at eta = beta/(K+1) (N = S = 1, f = w^2/2, w_0 = 1)."""
    return math.sqrt(int(K)) * TC.rate_run(int(K), exact=False)[1]


def _table_loop(what):
    p = dict(N=20, S=1, tau_comp=4, r=1, T=10**5)
    return float(B.rounds_loop_bound(**p)) if what == "bound" else int(tm.rounds_done(**p))


@pytest.fixture(scope="module")
def found():
    return verdicts(FRAGMENTS, extra=[n for n, w in CLAIMED.items() if w == "tight"] + [T + "theorem1_rate"])


@pytest.fixture(scope="module")
def rendered(found):
    def ce(arg):
        return ce_param(found, arg)

    def ends():
        p = {k: ce(f"tdma.rounds_loop_bound:{k}") for k in ("N", "S", "tau_comp", "r", "T")}
        t = tm.tdma_schedule(**p)
        return ", ".join(str(int(e)) for e in t.end)

    sp = found[T + "theorem1_corrected"].search["params"]
    rate_ce = found[T + "theorem1_rate"].counterexample["params"]
    computed = {
        "mnist_alpha": lambda: ",".join(str(int(a)) for a in tm.alpha_star(N=100, S=list(MNIST_S), tau_comp=50, r=1)),
        "table1": lambda: ", ".join(str(v) for v in tm.table1().values()),
        "etaL": lambda: sp["eta"] * sp["L"], "last": lambda a: ce(a)[-1], "ends": ends, "table_loop": _table_loop,
        "rr": _rr, "rate": lambda K: round(_rate(K)), "rate_limit": lambda: f"{(1 - math.exp(-2)) / 2:.4f}",
        "order_constant": lambda: rate_ce["Delta"] / rate_ce["beta"],     # Delta/beta (+ 0: no noise, Gamma = 0)
        "rate_ratio": lambda K: round(_rate(K) / (rate_ce["Delta"] / rate_ce["beta"])),
    }
    return render_all(FRAGMENTS, found, computed)


def test_the_page_is_the_checks(rendered, found):
    """The page's numbers and verdict words are a fresh run's (docsfrag.assert_page), and what it says of its
    instances is true."""
    assert_page(PAGE, rendered, CLAIMED, found)
