"""Issue 22, "make drift impossible": the README's table "What the checks find" is generated from the
ledgers (src/fltheory/papers/*/ledger.py) and a fresh full run of the checks it quotes; the test rebuilds it."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fltheory import claims, verify
from fltheory.validation import InputError
from fltheory.verify import Check, Sample
from runcache import fresh_run

ROOT = Path(__file__).resolve().parents[1]


def _demo(value, bound, relation="<="):
    return Check("demo.x", paper="demo", relation=relation,
                 sampler=lambda quick, seed: [Sample(value, bound, {"K": 3, "eta": 0.25})]).run()


def test_placeholders_are_filled_from_the_verdicts():
    held, broken, same = _demo(0.5, 1.0), _demo(3.0, 1.0), _demo(1.0, 1.0, "==")
    assert claims.render("{{verdict:a}}; {{ratio:a}}", {"a": held}) == "not refuted (worst ratio 0.5); 0.5"
    assert claims.render("{{verdict:b}} at K = {{param:b:K}}: {{value:b}} > {{bound:b}}", {"b": broken}) == \
        "violated (ratio 3) at K = 3: 3 > 1"
    assert claims.render("{{verdict:c}}", {"c": same}) == "agrees (worst error/tolerance 0)"
    assert claims.render("{{worst:a}}", {"a": held}) == "0.5"
    assert claims.render("no placeholder {4C/a²}", {}) == "no placeholder {4C/a²}"


@pytest.mark.parametrize("text, match", [("{{ratio:nope}}", "does not have"), ("{{value:a}}", "no counterexample"),
                                         ("{{param:b:T}}", "no parameter 'T'")])
def test_a_placeholder_that_cannot_be_filled_is_refused(text, match):
    with pytest.raises(InputError, match=match):
        claims.render(text, {"a": _demo(0.5, 1.0), "b": _demo(3.0, 1.0)})


def test_numbers_are_written_with_four_significant_digits():
    assert [claims._num(x) for x in (26425.229, 1e-48, -0.80386, 10000.0, 1.8891e10)] == \
        ["2.643 × 10⁴", "10⁻⁴⁸", "−0.8039", "10000", "1.889 × 10¹⁰"]


def test_every_violated_check_has_a_finding_and_every_quoted_check_exists():
    quoted = set(claims.quoted_checks())
    registered = {c.name: c for c in verify.registry()}
    assert quoted <= set(registered), sorted(quoted - set(registered))
    missing = sorted(n for n, c in registered.items() if c.expected == "violated" and n not in quoted)
    # the README's table names every false printed statement (some rows quote two checks of one statement)
    allowed = {"afl_dga.lemma1_used", "defedavg.theorem2_appendix"}
    assert set(missing) <= allowed, missing


@pytest.mark.parametrize("paper", claims.README_ORDER)
def test_the_readme_table_is_the_one_a_fresh_full_run_writes(paper):
    """Every number and label of the README's table, rebuilt from a fresh full run of the checks it quotes
    (a paper's rows at a time, so that the five parts run in parallel)."""
    report = fresh_run(claims.quoted_checks([paper]))   # shared with the docs pages' tests (tests/runcache.py)
    readme = (ROOT / "README.md").read_text()
    table = readme.split(claims.README_BEGIN + "\n", 1)[1].split("\n" + claims.README_END, 1)[0]
    label = f"| {claims.PAPER_LABELS[paper]} |"
    table = "\n".join(row for row in table.splitlines() if not row.startswith("| ") or row.startswith(label)
                      or row.startswith("| paper |"))
    fresh = claims.findings_table(report, [paper])
    if table != fresh:  # within display rounding: the same words, numbers equal to 4 significant digits
        num = re.compile(r"−?\d+(?:\.\d+)?")
        assert num.sub("#", table) == num.sub("#", fresh)
        for a, b in zip(num.findall(table), num.findall(fresh)):
            x, y = (float(s.replace("−", "-")) for s in (a, b))
            assert x == pytest.approx(y, rel=2e-3, abs=1e-12), (a, b)


def test_sync_readme_rewrites_only_between_its_markers_and_refuses_a_file_without_them(tmp_path):
    report = verify.Report([_demo(0.5, 1.0)], True, 0, 0.0, {})
    page = tmp_path / "README.md"
    page.write_text("intro\n")
    with pytest.raises(InputError, match="findings:begin"):
        claims.sync_readme(page, report)
    assert page.read_text() == "intro\n"


def test_the_script_refuses_a_readme_without_markers(tmp_path):
    page = tmp_path / "README.md"
    page.write_text("no table here\n")
    out = subprocess.run([sys.executable, "-m", "fltheory.claims", str(page)], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2 and "findings:begin" in out.stderr and page.read_text() == "no table here\n"


def test_coverage_lists_each_papers_numbered_results_with_existing_checks(capsys):
    from fltheory import cli

    registered = {c.name for c in verify.registry()}
    for paper in verify.PAPERS:
        for r in claims.results([paper]):
            assert set(r.checks) <= registered, (r.label, sorted(set(r.checks) - registered))
            assert r.checks or r.why, f"{paper} {r.label}: no check and no reason"
    assert cli.main(["bounds", "--coverage", "--paper", "tdma"]) == 0
    assert "== tdma: numbered results" in capsys.readouterr().out
    with pytest.raises(InputError, match="kind"):
        claims.Result("tdma", "Lemma 9", "guess", "x")


@pytest.mark.parametrize("paper", verify.PAPERS)
def test_every_check_named_in_a_ledger_exists_and_every_check_serves_a_result(paper):
    """Each paper's coverage: the checks its RESULTS name are registered, and every registered check serves some
    numbered result or is one of the ledger's EXTRAS, with its reason."""
    ledger = claims._ledger(paper)
    names = {c.name for c in verify.registry([paper])}
    named = {c for r in ledger.RESULTS for c in r.checks}
    assert named and named <= names, sorted(named - names)
    assert names - named == set(ledger.EXTRAS), sorted((names - named) ^ set(ledger.EXTRAS))
    assert all(ledger.EXTRAS.values())
    labels = [r.label for r in ledger.RESULTS]
    assert len(labels) == len(set(labels)) and all(r.paper == paper for r in ledger.RESULTS)
