"""The ``fltheory`` command: exit status, report folder, statement listing, LaTeX, figures."""
import json
import shutil
import subprocess
import sys

import pytest

from fltheory import verify
from fltheory.cli import main, paper_statements


def _verify(tmp_path, paper, only):
    return main(["verify", "--quick", "--paper", paper, "--only", only, "--no-progress",
                 "--out", str(tmp_path / "rep")])


def test_verify_writes_a_report_and_exits_zero(tmp_path, capsys):
    assert _verify(tmp_path, "local_adaptivity", "worked_example") == 0
    out = capsys.readouterr().out
    assert "worked_example" in out and "1/1 verdicts as expected" in out
    data = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert data["ok"] and len(data["verdicts"]) == 1


def test_verify_exits_nonzero_on_an_unexpected_verdict(tmp_path, monkeypatch):
    check = verify._REGISTRY["local_adaptivity.sgd_decaying_printed"]
    monkeypatch.setattr(check, "expected", "holds")  # the printed (68) is false: now a mismatch
    assert _verify(tmp_path, "local_adaptivity", "sgd_decaying_printed") == 1
    assert "sgd_decaying_printed" in (tmp_path / "rep" / "report.md").read_text()


def test_bounds_lists_every_statement(capsys):
    assert main(["bounds", "--latex"]) == 0
    out = capsys.readouterr().out
    assert r"\le" in out and "corrected (" in out and "== feddelavg" in out


def test_figures(tmp_path):
    assert main(["figures", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "feddelavg_alpha_vs_delta_etabeta0.02.png", "feddelavg_alpha_vs_delta_etabeta0.5.png",
        "local_adaptivity_bias_vs_eta.png"]


def test_a_violated_row_says_which_object_is_false(tmp_path):
    """(129) is a line of Theorem 3's proof: the report calls it a false proof step and says what stands."""
    report = verify.run(["local_adaptivity"], quick=True, only="theorem3_printed")
    (v,) = report.verdicts
    assert v.status == "violated" and v.falsifies == "proof step"
    assert "(100)" in v.still_stands and "not refuted" in v.still_stands
    md = report.to_markdown()
    assert "false proof step" in md and "Still stands:" in md
    assert "false proof step" in report.table()


def test_every_check_expected_violated_names_the_false_object_and_what_stands():
    for check in verify.registry():
        if check.expected == "violated":
            assert check.falsifies in verify.FALSE_OBJECTS, check.name
            assert len(check.still_stands) > 20, check.name


# ----------------------------------------------------------------------------- honest exits and messages
def test_verify_only_matching_nothing_is_an_error(tmp_path, capsys):
    assert _verify(tmp_path, "feddelavg", "no_such_check") == 2
    err = capsys.readouterr().err
    assert "no_such_check" in err and "matches no check" in err
    assert not (tmp_path / "rep").exists()


def test_verify_says_when_figures_were_skipped(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if matplotlib were not installed
    assert _verify(tmp_path, "feddelavg", "alpha_star") == 0
    out = capsys.readouterr().out
    assert "figures skipped: matplotlib is not installed" in out and "figures/" not in out
    assert "No figures: matplotlib is not installed" in (tmp_path / "rep" / "report.md").read_text()
    assert main(["figures", "--out", str(tmp_path / "figs")]) == 1
    assert "matplotlib is not installed" in capsys.readouterr().err


def test_verify_names_its_figures_when_drawn(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert _verify(tmp_path, "feddelavg", "alpha_star") == 0
    assert "2 figures in figures/" in capsys.readouterr().out
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "](figures/verdicts.png)" in md and "](figures/verdicts_feddelavg.png)" in md


# ----------------------------------------------------------------------------- statements by name, LaTeX file
def test_bounds_prints_every_statement_by_name(capsys):
    assert main(["bounds"]) == 0
    out = capsys.readouterr().out
    for paper in verify.PAPERS:
        names = [st.name for st in paper_statements(paper)]
        assert names, paper
        for name in names:
            assert f"- {paper}.{name}: " in out, (paper, name)


# control words the document may use: the LaTeX kernel, the article class, amsmath and amssymb
KNOWN_MACROS = set("""
documentclass usepackage allowdisplaybreaks setlength parindent begin end section subsection paragraph small
textbackslash textit textbf textrm emph text mathrm mathbf mathbb mathcal mathit mathsf mathfrak boldsymbol
operatorname rm bf it displaystyle textstyle scriptstyle
alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi rho varrho sigma
tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega ell
le leq ge geq ne neq lt gt approx sim simeq equiv propto ll gg lesssim gtrsim in notin subset subseteq cup cap
setminus emptyset varnothing forall exists neg lnot land lor wedge vee to rightarrow leftarrow Rightarrow iff
implies mapsto mid
frac tfrac dfrac sqrt sum prod int lim limsup liminf min max sup inf arg argmin log ln exp det tr Pr bmod pmod
binom left right big Big bigg Bigg bigl bigr Bigl Bigr middle langle rangle lceil rceil lfloor rfloor vert Vert
lvert rvert lVert rVert
bar hat tilde widetilde widehat overline underline dot ddot vec prime partial nabla infty cdot cdots ldots dots
times pm mp circ ast star bullet top
quad qquad hspace
""".split())


def latex_problems(tex: str) -> list:
    """Parser-level faults of a LaTeX document: unbalanced braces, environments or left/right,
    unknown control words, a `$` inside display math."""
    import re

    problems = []
    body = re.sub(r"(?<!\\)%.*", "", tex)
    plain = re.sub(r"\\[{}%$&#_\\]", "", body)  # escaped characters and row breaks
    depth = 0
    for ch in plain:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            problems.append("a } closes nothing")
            break
    if depth > 0:
        problems.append(f"{depth} unclosed {{")
    stack = []
    for kind, env in re.findall(r"\\(begin|end)\{([^}]*)\}", body):
        if kind == "begin":
            stack.append(env)
        elif not stack or stack.pop() != env:
            problems.append(f"\\end{{{env}}} does not close the open environment")
    if stack:
        problems.append(f"unclosed environments {stack}")
    for eq in re.findall(r"\\begin\{equation\*\}(.*?)\\end\{equation\*\}", body, flags=re.S):
        if len(re.findall(r"\\left(?![a-zA-Z])", eq)) != len(re.findall(r"\\right(?![a-zA-Z])", eq)):
            problems.append(f"unbalanced \\left/\\right in {eq[:60]!r}")
        if re.search(r"(?<!\\)\$", eq):
            problems.append(f"$ inside display math: {eq[:60]!r}")
    unknown = sorted(set(re.findall(r"\\([A-Za-z]+)", plain)) - KNOWN_MACROS)
    if unknown:
        problems.append(f"unknown control words {unknown}")
    return problems


def test_the_latex_checker_finds_what_breaks_a_document():
    good = "\\begin{document}\\begin{equation*}\\left(\\frac{1}{2}\\right)\\end{equation*}\\end{document}"
    assert latex_problems(good) == []
    assert any("unknown" in p for p in latex_problems(good.replace("\\frac", "\\fra81")))
    assert any("unclosed" in p for p in latex_problems(good.replace("{2}", "{2")))
    assert any("left" in p for p in latex_problems(good.replace("\\right)", ")")))
    assert any("close" in p for p in latex_problems(good.replace("\\end{equation*}", "\\end{align*}")))


@pytest.mark.parametrize("paper", verify.PAPERS)
def test_bounds_latex_file_parses_and_compiles(paper, tmp_path, capsys):
    tex = tmp_path / "sub" / f"{paper}.tex"
    assert main(["bounds", "--paper", paper, "--latex", "--out", str(tex)]) == 0
    assert f"written to {tex}" in capsys.readouterr().out
    text = tex.read_text()
    n = len(paper_statements(paper))
    assert text.count("\\begin{equation*}") == n and text.count("\\paragraph{") == n
    assert latex_problems(text) == []
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (apt-get install texlive-latex-base texlive-latex-recommended); "
                    "the parser-level check above ran")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                          "-output-directory", str(tmp_path), str(tex)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:]
    assert (tmp_path / f"{paper}.pdf").stat().st_size > 1000


def test_latex_document_refuses_unknown_papers():
    from fltheory.cli import latex_document
    from fltheory.validation import InputError, InputTypeError

    with pytest.raises(InputError, match="nope"):
        latex_document(["feddelavg", "nope"])
    with pytest.raises(InputTypeError, match="papers"):
        latex_document("feddelavg")
    assert latex_document(["feddelavg"]).count("\\begin{equation*}") == len(paper_statements("feddelavg"))
