"""What the docs-page tests share: a page's sentences with placeholders, rendered from a fresh run, must be in the page.

A page test lists FRAGMENTS, the page's sentences (or parts of them) with a placeholder wherever the page states a
number or a verdict.  Two kinds of placeholder:

* those of :mod:`fltheory.claims` (``{{ratio:check}}``, ``{{value:check}}``, ``{{bound:check}}``,
  ``{{worst:check}}``, ``{{verdict:check}}``, ``{{param:check:name}}``), filled from a fresh run of exactly the
  checks the fragments quote (:func:`verdicts`), ``{{status:check}}``, the verdict's status word
  (``holds``, ``tight`` or ``violated``), and ``{{worstratio:check}}``, the worst ratio over all its instances
  (for a violated check ``{{ratio:check}}`` is the counterexample's, the smallest violating instance);
* ``{{name}}`` or ``{{name:arg}}`` for a ``name`` the page test computes (``computed``: name -> function of the
  argument string, or of nothing), a value the package computes outside a verdict (an instance inside a check's
  sampler, a closed form); an ``arg`` that is, or starts with, a check's name (``defedavg.theorem2:eta``) puts
  that check in the run too.  Numbers are written as :mod:`fltheory.claims` writes them (four significant digits).

:func:`assert_on_page` then requires every rendered fragment to appear in the page, whitespace aside, so a number
that changes in the code fails the test until the page says the new one.
"""
from __future__ import annotations

import re
from pathlib import Path

from fltheory import claims, verify
from runcache import fresh_run

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
COMPUTED = re.compile(r"\{\{([A-Za-z_]\w*)(?::([^{}]*))?\}\}")
STATUS = re.compile(r"\{\{status:([A-Za-z_][\w.]*)\}\}")
WORST = re.compile(r"\{\{worstratio:([A-Za-z_][\w.]*)\}\}")


def squash(text: str) -> str:
    """``text`` with every run of whitespace made one space."""
    return re.sub(r"\s+", " ", text)


def page(name: str) -> str:
    """The text of ``docs/<name>`` (``"papers/tdma.rst"``, ``"usage.rst"``)."""
    return (DOCS / name).read_text()


def quoted(fragments) -> list:
    """The names of the checks the fragments quote, sorted."""
    registered = {c.name for c in verify.registry()}
    names = set()
    for f in fragments:
        names |= claims.checks_quoted(f) | set(STATUS.findall(f)) | set(WORST.findall(f))
        names |= {m.group(2).split(":")[0] for m in COMPUTED.finditer(f) if m.group(2)} & registered
    return sorted(names)


def verdicts(fragments, *, quick: bool = False, search: str | None = None, extra=()) -> dict:
    """check name -> Verdict of a fresh run of the checks the fragments quote and of ``extra``: the samplers at
    their full size (``quick``: the ``--quick`` size), the adversarial search at ``search`` (default ``"full"``, with
    ``quick`` ``"quick"``)."""
    names = sorted(set(quoted(fragments)) | set(extra))
    report = fresh_run(names, quick=quick, search=search)
    return {v.check: v for v in report.verdicts}


def _number(x) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, bool) or not isinstance(x, (int, float)) and not hasattr(x, "__float__"):
        raise TypeError(f"a computed placeholder must give a number or a string; got {x!r}")
    return claims._num(x)


def render(fragment: str, found: dict, computed=None) -> str:
    """``fragment`` with its placeholders filled from the verdicts ``found`` and the functions ``computed``."""
    computed = computed or {}
    text = STATUS.sub(lambda m: found[m.group(1)].status, fragment)
    text = WORST.sub(lambda m: claims._num(found[m.group(1)].worst_ratio), text)
    text = claims.render(text, found)

    def fill(m):
        name, arg = m.group(1), m.group(2)
        if name not in computed:
            raise KeyError(f"placeholder {m.group(0)}: the page test computes no {name!r}")
        return _number(computed[name](arg) if arg is not None else computed[name]())

    return COMPUTED.sub(fill, text)


def render_all(fragments, found: dict, computed=None) -> list:
    return [render(f, found, computed) for f in fragments]


def missing(page_text: str, rendered) -> list:
    """The rendered fragments that the page does not contain (whitespace aside)."""
    text = squash(page_text)
    return [r for r in rendered if squash(r) not in text]


def assert_on_page(page_text: str, rendered) -> None:
    absent = missing(page_text, rendered)
    assert not absent, "the page does not say (rendered from a fresh run):\n" + "\n".join(absent)


def assert_page(page_text: str, rendered, claimed: dict, found: dict) -> None:
    """Every number the page states is rendered from the fresh run (:func:`assert_on_page`) and every
    holds/tight/violated it says is the run's (:func:`assert_claimed`).  A page test makes both assertions in one test,
    so that the fresh run behind its fixtures is made once: xdist hands each test to any worker."""
    assert_on_page(page_text, rendered)
    assert_claimed(claimed, found)


def assert_claimed(claimed: dict, found: dict) -> None:
    """The page's words about checks it does not quote numbers of: ``claimed`` maps a check name to ``"holds"``
    (``tight`` counts: a tight bound holds), ``"tight"`` or ``"violated"``.  A check in ``found`` (this run's
    verdicts) is judged by its verdict; another by the registry's expected verdict, which the paper's checks test
    (``test_<paper>_checks.py``) holds every check to; ``"tight"`` is a result of a run, so it needs a verdict."""
    expected = {c.name: c.expected for c in verify.registry()}
    wrong = {}
    for name, word in claimed.items():
        assert word in ("holds", "tight", "violated"), (name, word)
        if name in found:
            status = found[name].status
        else:
            assert word != "tight", f"{name}: a claim of tightness needs the check in the page's run"
            status = expected[name]
        ok = status == word or (word == "holds" and status == "tight")
        if not ok:
            wrong[name] = (word, status)
    assert not wrong, f"the page says (claimed, found): {wrong}"


def tight(claimed: dict) -> list:
    """The checks ``claimed`` calls tight: they must be in the page's run (:func:`assert_claimed`)."""
    return [name for name, word in claimed.items() if word == "tight"]


def ce_param(found: dict, arg: str):
    """The parameter of a counterexample that ``arg`` (``"check:name"``) names, as stored (a list stays a list)."""
    name, key = arg.split(":")
    return found[name].counterexample["params"][key]
