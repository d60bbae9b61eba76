"""The ``fltheory`` command: exit status, report folder, statement listing, LaTeX, figures."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

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


@pytest.mark.parametrize("command", [[], ["verify"], ["bounds"], ["figures"]])
def test_help_shows_no_rst_markup(command, capsys):
    """Issue 23: `fltheory --help` printed the module docstring's ``literals``."""
    with pytest.raises(SystemExit) as stop:
        main([*command, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "usage: fltheory" in out
    assert "`" not in out and ":func:" not in out and "**" not in out, out
    if not command:
        assert "verify runs every registered check" in out


def test_figures(tmp_path):
    assert main(["figures", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".fltheory", "feddelavg_alpha_vs_delta_etabeta0.02.png", "feddelavg_alpha_vs_delta_etabeta0.5.png",
        "local_adaptivity_bias_vs_eta.png"]
    assert main(["figures", "--out", str(tmp_path)]) == 0   # its own earlier output: redrawn without --force


def test_a_violated_row_says_which_object_is_false(tmp_path):
    """(129) is a line of Theorem 3's proof: the report calls it a false proof step and says what stands."""
    report = verify.run(["local_adaptivity"], quick=True, only="theorem3_printed")
    (v,) = report.verdicts
    assert v.status == "violated" and v.falsifies == "proof step"
    assert "(100)" in v.still_stands and "not refuted" in v.still_stands
    md = report.to_markdown()
    assert "false proof step" in md and "Still stands:" in md
    assert "violated (proof step)" in report.table()


def _verdicts_of_every_check(status=None, instances=999):
    """A verdict for every registered check, as wide as a deep search makes it (no check is run)."""
    out = []
    for c in verify.registry():
        st = status or ("violated" if c.expected == "violated" else "tight")
        out.append(verify.Verdict(check=c.name, paper=c.paper, statement=c.name, variant=c.variant,
                                  relation=c.relation, status=st, expected=c.expected, instances=instances,
                                  worst_ratio=1.234e-05, metric="value/bound", falsifies=c.falsifies,
                                  search={"evaluations": c.search_budget[2]} if c.family is not None else None))
    return out


def test_the_console_table_has_a_check_column_and_fits_100_characters():
    """Issue 23: every check is named (the same statement checked twice is two names), no line is wider
    than 100 characters, and `tight` where `holds` is expected is as expected (the legend says why)."""
    verdicts = _verdicts_of_every_check()
    table = verify.Report(verdicts, quick=False, seed=0, seconds=1.0, environment={}).table()
    lines = table.splitlines()
    assert max(map(len, lines)) <= 100, max(lines, key=len)
    assert lines[0].split()[:2] == ["check", "variant"] and lines[0].split()[-1] == "ok"
    for paper in verify.all_papers():
        block = table.split(f"[{paper}]\n")[1].split("\n[")[0].split("\n\n")[0].splitlines()
        names = [line.split()[0] for line in block]
        assert len(names) == len(set(names)) == len(verify.registry([paper])), paper
    assert "MISMATCH" not in table and " NO" not in table and f"{len(verdicts)}/{len(verdicts)} verdicts" in table
    tight = [line for line in lines if "  tight  " in line]
    assert tight and all(line.rstrip().endswith("yes") for line in tight)
    assert "ok with holds or tight" in table
    assert "violated (proof step)" in table


def test_the_console_table_names_an_unexpected_verdict_below_it():
    verdicts = _verdicts_of_every_check(status="holds")
    table = verify.Report(verdicts, quick=False, seed=0, seconds=1.0, environment={}).table()
    bad = [v for v in verdicts if v.expected != "holds"]   # expected violated (or tight), found holds
    assert bad and sum(line.endswith("  NO") for line in table.splitlines()) == len(bad)
    for v in bad:
        assert f"NO: {v.check} is holds, expected {v.expected}" in table
    assert max(map(len, table.splitlines())) <= 100


def test_progress_writes_no_carriage_return_frames_to_a_log(tmp_path, capsys):
    """Issue 23: without a terminal the progress is plain lines (the bar's \\r frames filled logs)."""
    assert main(["verify", "--quick", "--paper", "tdma", "--only", "staleness", "--no-figures", "--jobs", "1",
                 "--out", str(tmp_path / "rep")]) == 0
    captured = capsys.readouterr()
    assert "\r" not in captured.err and "\r" not in captured.out
    n = len([c for c in verify.registry(["tdma"]) if "staleness" in c.name])
    assert f"verify: {n}/{n} checks done" in captured.err.splitlines()


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


# control words the document may use: the LaTeX kernel, the article class, amsmath, amssymb and graphicx
KNOWN_MACROS = set("""
documentclass usepackage allowdisplaybreaks setlength parindent begin end section subsection paragraph small
IfFileExists newsavebox newlength newcommand fltline fltbox fltwidth par noindent dimexpr linewidth relax sbox
ifdim wd resizebox usebox else fi raggedright smallskip medskip cases for otherwise
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
    plain = re.sub(r"\\[{}%$&#_\\]", " ", body)  # escaped characters and row breaks (a space: \min\{F is \min, F)
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
    for eq in re.findall(r"^\\fltline\{[^}]*\}\{(.*)\}$", body, flags=re.M):   # one line of a formula each
        if len(re.findall(r"\\left(?![a-zA-Z])", eq)) != len(re.findall(r"\\right(?![a-zA-Z])", eq)):
            problems.append(f"unbalanced \\left/\\right in {eq[:60]!r}")
        if re.search(r"(?<!\\)\$", eq):
            problems.append(f"$ inside display math: {eq[:60]!r}")
    unknown = sorted(set(re.findall(r"\\([A-Za-z]+)", plain)) - KNOWN_MACROS)
    if unknown:
        problems.append(f"unknown control words {unknown}")
    return problems


def test_the_latex_checker_finds_what_breaks_a_document():
    good = "\\begin{document}\n\\fltline{0pt}{\\left(\\frac{1}{2}\\right)}\n\\end{document}"
    assert latex_problems(good) == []
    assert any("unknown" in p for p in latex_problems(good.replace("\\frac", "\\fra81")))
    assert any("unclosed" in p for p in latex_problems(good.replace("{2}", "{2")))
    assert any("left" in p for p in latex_problems(good.replace("\\right)", ")")))
    assert any("close" in p for p in latex_problems(good.replace("\\end{document}", "\\end{align*}")))
    assert any("$" in p for p in latex_problems(good.replace("{2}", "{$2$}")))


@pytest.mark.parametrize("paper", verify.PAPERS)
def test_bounds_latex_file_parses_and_compiles(paper, tmp_path, capsys):
    tex = tmp_path / "sub" / f"{paper}.tex"
    assert main(["bounds", "--paper", paper, "--latex", "--out", str(tex)]) == 0
    assert f"written to {tex}" in capsys.readouterr().out
    text = tex.read_text()
    n = len(paper_statements(paper))
    assert text.count("{\\small\\smallskip") == n and text.count("\\paragraph{") == n
    assert "\\usepackage[T1]{fontenc}" in text   # < > | in the titles are those characters, not ¡ ¿ —
    assert latex_problems(text) == []
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (apt-get install texlive-latex-base texlive-latex-recommended); "
                    "the parser-level check above ran")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                          "-output-directory", str(tmp_path), str(tex)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:]
    assert (tmp_path / f"{paper}.pdf").stat().st_size > 1000
    log = (tmp_path / f"{paper}.log").read_text(errors="replace")
    overfull = re.findall(r"^Overfull \\hbox.*$", log, re.M)
    assert overfull == [], overfull[:5]   # no formula or condition runs past the margin


def test_latex_document_refuses_unknown_papers():
    from fltheory.cli import latex_document
    from fltheory.validation import InputError, InputTypeError

    with pytest.raises(InputError, match="nope"):
        latex_document(["feddelavg", "nope"])
    with pytest.raises(InputTypeError, match="papers"):
        latex_document("feddelavg")
    assert latex_document(["feddelavg"]).count("{\\small\\smallskip") == len(paper_statements("feddelavg"))


@pytest.mark.parametrize("paper", verify.PAPERS)
def test_latex_lines_cut_long_formulas_where_they_balance(paper):
    """Issue 23: a formula is cut at its top-level sums and relations (never inside braces, an environment
    or \\left...\\right), the pieces join back to the formula, and every long formula is cut."""
    from fltheory.cli import LINE_UNITS, _formula_lines, _tex_width, _top_level_pieces

    for st in paper_statements(paper):
        tex = st.latex(conditions=False)
        pieces = _top_level_pieces(tex)
        assert " ".join(pieces).split() == tex.split(), st.name
        for piece in pieces:
            assert piece.count("{") == piece.count("}"), (st.name, piece)
            assert len(re.findall(r"\\left(?![a-z])", piece)) == len(re.findall(r"\\right(?![a-z])", piece))
            assert piece.count("\\begin{") == piece.count("\\end{"), (st.name, piece)
        lines = _formula_lines(st)
        assert len(lines) >= 1 + bool(st.latex_conditions())
        if _tex_width(tex) > 2 * LINE_UNITS and len(pieces) > 2:
            assert len(lines) > 1 + bool(st.latex_conditions()), st.name


# ----------------------------------------------------------------------------- output paths (issue 19, part B)
def _one_line_error(capsys, command, *, quiet=False):
    captured = capsys.readouterr()
    err = captured.err
    assert not quiet or captured.out == "", captured.out   # refused before anything was listed
    assert err.startswith(f"fltheory {command}:") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_bounds_never_writes_through_a_symlink(tmp_path, capsys):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    link = tmp_path / "out.tex"
    link.symlink_to(target)
    for extra in ([], ["--force"]):
        assert main(["bounds", "--paper", "tdma", "--out", str(link), *extra]) == 2
        assert "symbolic link" in _one_line_error(capsys, "bounds")
    assert target.read_text() == "keep me" and link.is_symlink()


def test_bounds_overwrites_an_existing_file_only_with_force(tmp_path, capsys):
    tex = tmp_path / "out.tex"
    tex.write_text("old")
    assert main(["bounds", "--paper", "tdma", "--out", str(tex)]) == 2
    err = _one_line_error(capsys, "bounds")
    assert "--force" in err and str(tex) in err
    assert tex.read_text() == "old"
    assert main(["bounds", "--paper", "tdma", "--out", str(tex), "--force"]) == 0
    assert tex.read_text().startswith("\\documentclass")


@pytest.mark.parametrize("where", ["a folder", "under a file", "a dangling link"])
def test_bounds_bad_paths_give_one_line_and_exit_2(tmp_path, capsys, where):
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    out = {"a folder": tmp_path / "dir", "under a file": tmp_path / "file" / "sub" / "out.tex",
           "a dangling link": tmp_path / "dangling"}[where]
    assert main(["bounds", "--paper", "tdma", "--out", str(out), "--force"]) == 2
    _one_line_error(capsys, "bounds", quiet=True)
    assert not (tmp_path / "nowhere").exists() and (tmp_path / "file").read_text() == "x"


def test_an_unwritable_location_gives_one_line(tmp_path, capsys):
    import os

    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user who may write anywhere (root)")
        assert main(["bounds", "--paper", "tdma", "--out", str(locked / "out.tex")]) == 2
        assert "permission denied" in _one_line_error(capsys, "bounds")
        assert main(["verify", "--paper", "tdma", "--only", "x", "--out", str(locked / "rep")]) == 2
        _one_line_error(capsys, "verify")
    finally:
        locked.chmod(0o700)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_location_even_root_cannot_write_gives_one_line(capsys):
    assert main(["bounds", "--paper", "tdma", "--out", "/proc/self/fltheory-statements.tex"]) == 2
    _one_line_error(capsys, "bounds")
    assert main(["figures", "--out", "/proc/self/fltheory-figures"]) == 2
    _one_line_error(capsys, "figures")


def test_a_write_that_fails_late_gives_one_line(tmp_path, capsys, monkeypatch):
    """An OSError while writing (the disk full, the folder gone) is one line too, never a traceback."""
    from fltheory import cli

    def failing(path, text, *, force):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(cli, "_write_new", failing)
    assert main(["bounds", "--paper", "tdma", "--out", str(tmp_path / "out.tex")]) == 2
    assert "No space left" in _one_line_error(capsys, "bounds")


def _no_check_may_run(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a check ran before the output path was checked")

    monkeypatch.setattr(verify, "run", refuse)


@pytest.mark.parametrize("command", ["verify", "figures"])
def test_an_existing_file_as_out_folder_is_refused_before_any_work(tmp_path, capsys, monkeypatch, command):
    _no_check_may_run(monkeypatch)
    existing = tmp_path / "report"
    existing.write_text("not a folder")
    for extra in ([], ["--force"]):
        assert main([command, "--out", str(existing), *extra]) == 2
        assert "not a folder" in _one_line_error(capsys, command)
    assert existing.read_text() == "not a folder"


@pytest.mark.parametrize("command", ["verify", "figures"])
def test_an_out_folder_that_is_a_symlink_is_refused(tmp_path, capsys, monkeypatch, command):
    _no_check_may_run(monkeypatch)
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert main([command, "--out", str(tmp_path / "link"), "--force"]) == 2
    assert "symbolic link" in _one_line_error(capsys, command)
    assert list(real.iterdir()) == []


def test_a_symlink_inside_a_report_folder_is_refused(tmp_path, capsys, monkeypatch):
    _no_check_may_run(monkeypatch)
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / ".fltheory").write_text("fltheory verify\n")
    (tmp_path / "precious").write_text("keep me")
    (rep / "report.md").symlink_to(tmp_path / "precious")
    assert main(["verify", "--out", str(rep), "--force"]) == 2
    assert "symbolic link" in _one_line_error(capsys, "verify")
    assert (tmp_path / "precious").read_text() == "keep me"


def test_verify_refuses_a_folder_that_is_not_an_earlier_report(tmp_path, capsys, monkeypatch):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")
    with monkeypatch.context() as m:
        _no_check_may_run(m)
        assert main(["verify", "--out", str(mine)]) == 2
        err = _one_line_error(capsys, "verify")
        assert "--force" in err and "earlier" in err
    # an earlier report (it holds the marker the report writes) is rewritten without a word
    assert _verify(tmp_path, "feddelavg", "alpha_star") == 0
    assert (tmp_path / "rep" / ".fltheory").read_text() == "fltheory verify\n"
    assert _verify(tmp_path, "feddelavg", "alpha_star") == 0
    # with --force a foreign folder is written into, its other files kept
    assert main(["verify", "--quick", "--paper", "feddelavg", "--only", "alpha_star", "--no-progress", "--no-figures",
                 "--out", str(mine), "--force"]) == 0
    assert (mine / "notes.txt").read_text() == "my notes" and (mine / "report.json").exists()


def test_figures_refuses_a_folder_it_did_not_make(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    from fltheory import plotting

    def refuse(*args, **kwargs):
        raise AssertionError("a figure was drawn before the output path was checked")

    monkeypatch.setattr(plotting, "bias_vs_eta_figure", refuse)
    (tmp_path / "local_adaptivity_bias_vs_eta.png").write_text("someone else's")
    assert main(["figures", "--out", str(tmp_path)]) == 2
    assert "--force" in _one_line_error(capsys, "figures")
    assert (tmp_path / "local_adaptivity_bias_vs_eta.png").read_text() == "someone else's"


@pytest.mark.parametrize("only", ["", "   "])
def test_verify_refuses_an_empty_only(tmp_path, capsys, monkeypatch, only):
    _no_check_may_run(monkeypatch)
    assert main(["verify", "--only", only, "--out", str(tmp_path / "rep")]) == 2
    assert "--only" in _one_line_error(capsys, "verify")
    assert not (tmp_path / "rep").exists()


def test_verify_run_refuses_an_empty_only():
    from fltheory.validation import InputError

    with pytest.raises(InputError, match=r"\bonly\b"):
        verify.run(["feddelavg"], quick=True, only=" ")


@pytest.mark.parametrize("raw", ["\u00b2", "\u0661", "+2", "9" * 5000, "2000"])
def test_a_bad_thread_count_in_the_environment_is_named(tmp_path, capsys, monkeypatch, raw):
    from fltheory import parallel

    monkeypatch.setenv("FLTHEORY_NUM_THREADS", raw)
    monkeypatch.setitem(parallel._state, "n", None)
    assert main(["bounds", "--paper", "tdma"]) == 2
    assert "FLTHEORY_NUM_THREADS" in _one_line_error(capsys, "bounds")
