"""Starting instances of the adversarial searches, found by the deep search.

``fltheory verify --search deep`` spends 20 times the full run's search budget on every searched
check (and, where a check evaluates many instances at once, 20 times that again in batches).  Where
it found a worse instance than the full run, the instance is recorded here and the check's search
(every level) evaluates it first, so that the default run reports what the deep one found instead of
rediscovering it in minutes.  Each entry is the check's family parameters and the ratio the deep
search reported there; ``tests/test_deep_starts.py`` rebuilds every one (the ratio to 1e-9, inside the
family) and checks that the full run's verdict reaches it.  Nothing here is a verdict: the search
evaluates these instances afresh, beside its own draws.

Recorded from the reports of ``fltheory verify --search deep --jobs 2`` and ``fltheory verify
--jobs 2`` (seed 0) by ``python -m fltheory.papers.deep_starts DEEP/report.json FULL/report.json``,
which prints this module with the instances where the deep search went higher than the full run
(by more than 1e-4 of the ratio), keeping the ones recorded before.  Recorded twice: the second deep
run (started from the first one's instances) went higher on 9 checks, mostly at FedDelAvg's K <= 200.
"""
from __future__ import annotations

import json
import sys

__all__ = ["DEEP_STARTS", "record"]

DEEP_STARTS: dict = {
    'defedavg.lemma3': (
        {'d': 2, 'N': 1000, 'n': 1000, 'K': 1, 'lam': 2, 'T': 40, 'dir_seed': 0, 'rates': 'prescribed',
         'L': 0.001, 'b_scale': 0.012445503311239779, 'sigma2': 6233.271489445015,
         'phi_frac': 1.0081293307504799e-06, 'u1': 0.01474262517324579, 'u2': 0.9854827647878054,
         'G2_factor': 2.772321028698312e-09},
        0.4997499995940162),
    'defedavg.lemma5': (
        {'d': 1, 'N': 16, 'n': 16, 'K': 1, 'lam': 1, 'delay': 'uniform', 'T': 20, 'dir_seed': 0,
         'rates': 'prescribed', 'L': 0.001, 'b_scale': 0.0001, 'sigma2': 100000000.0, 'phi_frac': 1e-06,
         'u1': 1.0, 'u2': 1.0, 'G2_factor': 1e-09},
        0.48437490713231085),
    'defedavg.lemma8': (
        {'d': 1, 'L': 0.01, 'a2': 1.0, 'theta': 0.0, 'N': 1, 'n': 1, 'K': 92, 'lam': 1, 'D': 1,
         'delay': 'constant', 'T': 2, 'sigma2_factor': 5144.9658543215955, 'phi_frac': 1e-06, 'rates': 'free',
         'u_bar': 0.2708273524208974, 'u_prod': 0.4900819534724911, 'clients': 'nonconvex'},
        0.9081748216229887),
    'defedavg.lemma9': (
        {'d': 1, 'L': 0.01016109295174969, 'a2': 1.0, 'theta': 0.0, 'N': 1, 'n': 1, 'K': 121, 'lam': 1,
         'D': 1, 'delay': 'constant', 'T': 2, 'sigma2_factor': 9724.208398805078,
         'phi_frac': 1.0000000000000004e-06, 'rates': 'free', 'u_bar': 0.9999999999999831,
         'u_prod': 0.9880858542244337, 'clients': 'nonconvex'},
        0.3129359976194372),
    'defedavg.lemma9_corrected': (
        {'d': 1, 'L': 0.017572553581333687, 'a2': 1.0, 'theta': 0.0, 'N': 1, 'n': 1, 'K': 117, 'lam': 1,
         'D': 1, 'delay': 'constant', 'T': 2, 'sigma2_factor': 10000.0, 'phi_frac': 1.0000000000000004e-06,
         'rates': 'free', 'u_bar': 1.0, 'u_prod': 1.0, 'clients': 'nonconvex'},
        0.2985169187713342),
    'defedavg.rate_lambda1': (
        {'d': 1, 'L': 10.0, 'N': 1, 'n': 1, 'K': 4, 'lam': 1, 'T': 160, 'sigma2_factor': 248.5344369620293,
         'phi_frac': 1.0, 'u_bar': 0.19291215865364772, 'u_prod': 0.20511035878574002, 'seed': 971632,
         'dir_seed': 883546, 'delay': 'per_client'},
        0.17822382987348645),
    'defedavg.theorem1_corrected_events': (
        {'d': 1, 'L': 0.2, 'N': 1, 'n': 1, 'K': 1, 'T': 18, 'sigma2': 999.9999999999989,
         'phi_frac': 0.2926924211809954, 'b_scale': 0.019573677532257885, 'policy': 'overwrite',
         't_dl': 0.46678351984426353, 't_ul': 0.8240018076499193, 'seed': 158471, 'dir_seed': 680687},
        0.06729871691136677),
    'defedavg.theorem1_events': (
        {'d': 1, 'L': 0.2, 'N': 1, 'n': 1, 'K': 1, 'T': 17, 'sigma2': 1000.0, 'phi_frac': 0.2926924211809954,
         'b_scale': 0.019573677532257885, 'policy': 'overwrite', 't_dl': 0.46678351984426353,
         't_ul': 0.8240018076499193, 'seed': 158471, 'dir_seed': 680687},
        0.020931040502221877),
    'defedavg.theorem1_general': (
        {'d': 2, 'N': 1000, 'n_frac': 1.0, 'K': 8, 'lam': 1, 'delay': 'zero', 'T': 17, 'dir_seed': 1000000,
         'L': 49.42610696667607, 'homog': 1.0, 'sigma2': 100000000.0, 'a_ratio': 1.0,
         'phi_frac': 1000000000000.0, 'u1': 1.0, 'u2': 1.0},
        0.29814280464143095),
    'defedavg.theorem2_corrected': (
        {'d': 1, 'L': 100.0, 'a2': 1.0, 'theta': 0.0, 'N': 1, 'n': 1, 'K': 8, 'lam': 4, 'D': 0,
         'delay': 'events', 'T': 40, 'sigma2_factor': 7.286044338762815, 'phi_frac': 1.0,
         'rates': 'prescribed', 'u_bar': 1.0, 'u_prod': 1.0},
        0.1774926147156444),
    'feddelavg.exp_fedavg_best_without_delay': (
        {'seed': 760660, 'sep': 2.7805487040095844, 'size': 'small'},
        0.979721512527109),
    'feddelavg.exp_final_accuracy_within_3pct': (
        {'seed': 48546, 'sep': 2.617358040092388, 'size': 'small'},
        0.7388888888642594),
    'feddelavg.exp_small_alpha_beats_fedavg': (
        {'seed': 898945, 'sep': 2.3439897559127187, 'size': 'small'},
        0.6236609481735632),
    'feddelavg.gd_inverse_gap': (
        {'clients': 'huber', 'M': 1, 'tau': 3, 'K': 4, 'lag': 1, 'alpha': 0.9961659839164451,
         'eb': 0.0001993534680959549, 'kappa': 1.9688563663232725, 'spread': 0.5309163561553629,
         'theta': 0.753901153753226, 'opp': 0.36671155542978423, 'init': 4.282606402550117e-09,
         'init_ang': 1.6101223761030934, 'rho0': 0.09825578579506856, 'width': 0.0005016318662614865},
        0.9997995436970648),
    'feddelavg.gd_period_gap': (
        {'clients': 'huber', 'M': 1, 'tau': 6, 'K': 4, 'lag': 0, 'alpha': 0.9999260871072917,
         'eb': 8.36667181460119e-05, 'kappa': 2.267577821749003, 'spread': 0.7066465242226587,
         'theta': 1.1647938752877334, 'opp': 0.5447997484577676, 'init': 0.046353095586833,
         'init_ang': 2.7183473450090356, 'rho0': 9.121287388786684e-06, 'width': 0.00020005803188130362},
        0.9999181271752995),
    'feddelavg.h_sum': (
        {'eb': 9.492224524220969, 'beta': 100.0, 'L': 13.193339695720192, 'delta_frac': 2.0, 'tau': 21,
         'Delta_frac': 0.42452726502209437, 'n': 60},
        0.031484254677917455),
    'feddelavg.psi_combination': (
        {'eb': 9.949532202047266, 'beta': 7.577843420302957, 'L': 405.1198667467332, 'delta_frac': 0.0,
         'tau': 60, 'Delta_frac': 1.0, 'alpha': 3.9834015495571366e-11, 'k': 148},
        0.030715658536598574),
    'feddelavg.psi_inf_as_limit': (
        {'eb': 9.975125322076561, 'beta': 27.87355218887253, 'L': 1000.0, 'delta_frac': 0.0, 'tau': 59,
         'Delta_frac': 1.0, 'alpha': 0.0018341287595714671},
        0.03223869007906566),
    'feddelavg.theorem1_corrected': (
        {'clients': 'huber', 'M': 1, 'tau': 6, 'K': 200, 'lag': 0, 'alpha': 1.0, 'alpha_is_1': True,
         'eb': 0.14309456277839033, 'kappa': 1.0356331309771243, 'spread': 0.0003646155630405478,
         'theta': 0.014930745951614144, 'opp': 0.01721819147484056, 'init': 9.758713855234534,
         'init_ang': 3.1371422340075155, 'rho0': 0.9428294090457621, 'width': 0.817898698679486},
        0.833637044964149),
    'feddelavg.xi_star_bound': (
        {'clients': 'huber', 'M': 1, 'tau': 5, 'K': 200, 'lag': 0, 'alpha': 1.0, 'eb': 0.15422103739491938,
         'kappa': 3.038582066992907, 'spread': 0.9334766837075197, 'theta': 0.34630851978148075,
         'opp': 0.477327993235725, 'init': 1.5769657588407857, 'init_ang': 2.469627694030245,
         'rho0': 0.027549863639378128, 'width': 0.473489048164349},
        0.8221246871323861),
    'local_adaptivity.corrected_bias_first_order': (
        {'M': 2, 'd': 1, 'seed': 499001, 'w1': 0.9799866014202183, 'h1': 9.977532458006861,
         'h2': 0.10037731408263978, 'kappa': 2.910444629322608, 'p1': 10.0, 'p2': 0.6073060797308953,
         'p_aniso': 6.514379797616358, 'c2': 1.4996897525324906, 't1': 2, 't2': 9, 'u1': 0.45557538868362635,
         'u2': 0.001006829451215722, 'cancel': 0, 'eps': 0.02039708043095284},
        0.99999859829662),
    'local_adaptivity.eq9_identity': (
        {'seed': 1, 'w1': 0.9973941852208255, 'w2': 0.8496787362624062, 'h1': 2.2159304927388046,
         'h2': 0.13993506800696257, 'h3': 6.242503816464255, 'p1': 4.804155993102622,
         'p2': 0.5228793804094157, 'p3': 0.9639067432296564, 'u1': 0.0018178917005265225, 'u2': 0.001,
         'u3': 0.04785047031443572, 't1': 3, 't2': 1, 't3': 1},
        0.019069354132424235),
    'local_adaptivity.theorem1_proven': (
        {'M': 3, 'tau': 1, 'seed': 672795, 'T': 2198, 'L': 10.0, 'kappa': 1.0, 'eta_h': 0.04450790084098648,
         'sigma2': 1e-30, 'r0': 10000.0},
        0.18409331399820628),
    'local_adaptivity.theorem1_proven_exp': (
        {'M': 3, 'tau': 1, 'seed': 1000000, 'T': 2196, 'L': 8.564938663111196, 'kappa': 1.0,
         'eta_h': 0.04590217976354299, 'sigma2': 1.924248171013583e-30, 'r0': 5880.498829994507},
        0.17744037722329462),
    'local_adaptivity.theorem3_128_at_130': (
        {'D': 3.084238312655495e-06, 'L': 0.0010806542509794136, 'Lambda': 1.518114284940856,
         'G': 0.010002785787321868, 'T': 632745, 'tau': 23},
        0.002000357409090805),
    'local_adaptivity.theorem3_min': (
        {'M': 3, 'd': 1, 'tau': 1, 'T': 2, 'seed': 407992, 'a_scale': 0.4858672679202302,
         'b_scale': 1.5324313767072195, 'c_scale': 1.8992137705300762, 'x0_scale': 0.012798548288331687,
         'inv_v0': 4.195809159536437e-15, 'step_gap': 0.30310873406123234},
        0.3053247016972476),
    'tdma.lemma4_28': (
        {'G': 6, 'S': 3, 'K_extra': 10, 'm': 1, 'B': 8, 'tau_comp': 19, 'r': 1, 'seed': 341719,
         'c_pattern': 'pm', 'x0_dir': 'random', 'c_side': 'above', 'c_rel': 0.4776621561882362, 'L': 3.0,
         'A_spread': 1.0, 'sigma': 0.0, 'x0_scale': 2.9727960469380066, 'eta_L': 0.08551400042534694},
        0.3817645734025247),
}


def record(deep: dict, full: dict, registry) -> dict:
    """``{check: (family params, deep ratio)}`` for every searched check expected to hold whose deep search went
    higher than the full run by more than 1e-4 of the ratio (reports as ``Report.to_json()``; ``registry``: the
    checks, by name)."""
    worst = {v["check"]: v["worst_ratio"] for v in full["verdicts"]}
    out = {}
    for v in deep["verdicts"]:
        s, c = v.get("search"), registry.get(v["check"])
        if not s or c is None or c.family is None or v["status"] not in ("holds", "tight"):
            continue
        if s["ratio"] > worst.get(v["check"], float("inf")) + 1e-4 * max(1.0, abs(worst[v["check"]])):
            out[v["check"]] = ({n: s["params"][n] for n in c.family.names}, s["ratio"])
    return out


def _module_text(starts: dict) -> str:
    head = open(__file__, encoding="utf-8").read().split("DEEP_STARTS: dict = {")[0]
    def row(name, params, ratio):
        items, lines = [f"{k!r}: {v!r}" for k, v in params.items()], [""]
        for it in items:     # the items packed into lines of about 100 characters
            if lines[-1] and len(lines[-1]) + len(it) + 2 > 100:
                lines.append("")
            lines[-1] += (", " if lines[-1] else "") + it
        body = (",\n" + " " * 9).join(lines)
        return f"    {name!r}: (\n        {{{body}}},\n        {ratio!r}),\n"

    rows = "".join(row(name, params, ratio) for name, (params, ratio) in sorted(starts.items()))
    tail = open(__file__, encoding="utf-8").read().split("\n}\n", 1)[1]
    return head + "DEEP_STARTS: dict = {\n" + rows + "}\n" + tail


if __name__ == "__main__":   # pragma: no cover - a maintainer's tool
    from fltheory import verify

    deep, full = (json.load(open(p, encoding="utf-8")) for p in sys.argv[1:3])
    # the instances recorded before stay (every search starts from them now); a new one replaces its check's
    sys.stdout.write(_module_text({**DEEP_STARTS, **record(deep, full, {c.name: c for c in verify.registry()})}))
