"""The documentation under docs/: it builds with warnings as errors (Sphinx, API pages from the
docstrings, the notebooks rendered as stored, with their outputs: every figure), covers every paper, and refers to
nothing outside the repository."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fltheory import verify

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SOURCES = sorted(p for p in DOCS.rglob("*") if p.suffix in {".rst", ".md", ".py"} and "notebooks" not in p.parts)


def test_every_paper_has_a_page_in_the_toctree():
    index = (DOCS / "index.rst").read_text()
    for paper in verify.PAPERS:
        page = DOCS / "papers" / f"{paper}.rst"
        assert page.exists(), paper
        assert f"papers/{paper}\n" in index, paper
        text = page.read_text()
        assert f".. fltheory-checks:: {paper}" in text and f".. fltheory-paper-api:: {paper}" in text
    for nb in (ROOT / "notebooks").glob("*.ipynb"):  # rendered through the docs/notebooks link and a glob
        assert (DOCS / "notebooks" / nb.name).resolve() == nb.resolve()


@pytest.mark.parametrize("page", ["local_adaptivity", "feddelavg"])
def test_the_finished_papers_pages_say_what_is_false_and_why(page):
    text = (DOCS / "papers" / f"{page}.rst").read_text()
    for heading in ("Notation in the code", "Time indexing", "What was found false, and why"):
        assert heading in text, heading
    for check in verify.registry([page]):
        if check.expected == "violated":
            assert f"``{check.name}``" in text, check.name  # each counterexample is discussed by name


def test_the_docs_refer_to_nothing_outside_the_repository():
    assert SOURCES
    for path in SOURCES:
        text = path.read_text()
        for pattern in (r"/work/", r"\bshared/", r"\bspec\b", r"https?://", r"\.\./\.\./\.\.", r"\bseed \d{3}\b"):
            assert not re.search(pattern, text), (path.name, pattern)


@pytest.fixture(scope="module")
def built_docs(tmp_path_factory):
    """The HTML docs, built once for this module's tests (about 12 s on 2 cores) into a temporary folder."""
    pytest.importorskip("sphinx", reason="the docs extra (pip install -e '.[docs]') is not installed")
    pytest.importorskip("myst_nb", reason="the docs extra (pip install -e '.[docs]') is not installed")
    tmp_path = tmp_path_factory.mktemp("docs")
    out = tmp_path / "html"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")  # nothing written into the repository
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
                          "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    return out


def test_docs_build_with_warnings_as_errors(built_docs):
    """The build (warnings as errors) has every page, documents the package's own names, links nothing outside,
    and shows every notebook figure (one test on the one build: xdist would build once per worker otherwise)."""
    out = built_docs
    _every_figure_of_every_notebook(out)
    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.html")}
    for paper in verify.PAPERS:
        assert f"papers/{paper}.html" in pages, paper
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        assert f"notebooks/{nb.stem}.html" in pages, nb.name
    assert "api.html" in pages and "usage.html" in pages
    api = (out / "api.html").read_text()
    for module in ("fltheory.verify", "fltheory.schedules", "fltheory.schedule_generators", "fltheory.problems",
                   "fltheory.problems_nonquadratic", "fltheory.problems_logistic", "fltheory.delayed",
                   "fltheory.delayed_registers", "fltheory.delayed_simulation", "fltheory.symbolic"):
        assert f'id="module-{module}"' in api, module
    feddelavg = (out / "papers" / "feddelavg.html").read_text()
    assert 'id="module-fltheory.papers.feddelavg.bounds"' in feddelavg and "feddelavg.theorem1" in feddelavg
    for page in out.rglob("*.html"):  # no link leaves the repository (MathJax is the one script loaded)
        assert not re.search(r'href="https?://', page.read_text()), page.name
    assert "minimize_scalar" not in feddelavg   # the page documents the package's names, not SciPy's
    documented = {m for page in out.rglob("*.html") for m in re.findall(r'<dt class="sig[^"]*" id="(fltheory[\w.]+)"',
                                                                        page.read_text())}
    assert len(documented) > 300
    for moved in ("schedule_generators.first_n_arrivals", "schedule_generators.anarchic_participation",
                  "problems_nonquadratic.PseudoHuberFederation", "problems_logistic.LogisticFederation",
                  "delayed_simulation.simulate_schedule", "delayed_registers.RegisterMoments", "delayed.schedule_moments"):
        assert f"fltheory.{moved}" in documented, moved   # the split modules' objects are on the API page
    assert [name for name in documented if _imported_from_elsewhere(name)] == []


def _imported_from_elsewhere(name: str) -> bool:
    """Whether the documented ``name`` (module.attribute) is a class or function another package defines."""
    import importlib
    import inspect

    module, _, attr = name.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return False     # a method or attribute of a class: its class is checked
    return (inspect.isclass(obj) or inspect.isroutine(obj)) and not obj.__module__.startswith("fltheory")


def test_every_statement_has_a_title():
    """Issue 23: nine TDMA corrected statements had none (the docs and the LaTeX document show the title)."""
    import fltheory

    for paper in verify.PAPERS:
        for name, st in fltheory.statements(paper).items():
            assert len((st.title or "").strip()) >= 10, name


def _public_docstrings():
    """(name, docstring) of every module of the package and of its public classes, functions, methods and
    properties defined there (what the API pages show)."""
    import importlib
    import inspect
    import pkgutil

    import fltheory

    for info in sorted(pkgutil.walk_packages(fltheory.__path__, "fltheory."), key=lambda m: m.name):
        module = importlib.import_module(info.name)
        yield info.name, module.__doc__
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != info.name:
                continue
            if inspect.isclass(obj) or inspect.isfunction(obj):
                yield f"{info.name}.{name}", obj.__doc__
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    inner = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                    if not attr.startswith("_") and (inspect.isfunction(inner) or isinstance(member, property)):
                        yield f"{info.name}.{name}.{attr}", inner.__doc__


def test_no_docstring_is_shown_verbatim():
    """Issue 23: 112 docstrings were not valid reStructuredText once napoleon had read them, so the API pages
    showed them as literal blocks.  Each public docstring goes through what the docs build does to it (the
    extension's section titles, napoleon, then docutils); any warning or error fails, naming the docstring."""
    pytest.importorskip("sphinx", reason="the docs extra (pip install -e '.[docs]') is not installed")
    import inspect

    from sphinx.ext.napoleon import Config
    from sphinx.ext.napoleon.docstring import NumpyDocstring

    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import fltheory_docs
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    config = Config(napoleon_numpy_docstring=True, napoleon_google_docstring=False)
    bad, seen = {}, 0
    for name, doc in _public_docstrings():
        if not doc:
            continue
        seen += 1
        lines = inspect.cleandoc(doc).splitlines()
        fltheory_docs.rubric_sections(None, "", name, None, {}, lines)
        problems = fltheory_docs._rst_problems("\n".join(NumpyDocstring(lines, config).lines()))
        if problems:
            bad[name] = problems[0].splitlines()[0]
    assert seen > 500 and bad == {}


def test_the_checker_finds_what_the_docs_would_show_verbatim():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import fltheory_docs
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    assert fltheory_docs._rst_problems("The step :func:`fltheory.sweep.sweep` takes ``eta``.") == []
    assert fltheory_docs._rst_problems("Shapes (*batch, d) of x.")            # emphasis never closed
    assert fltheory_docs._rst_problems("the ratio |value - bound| of x")      # a substitution never defined
    assert fltheory_docs._rst_problems("a : one\n    indented\nb : two")     # unexpected indentation


def _every_figure_of_every_notebook(built_docs):
    """Each notebook page has an image for every figure its code saves, and each image file exists (the
    docs render the stored outputs; tests/test_notebooks.py checks that they are the current code's)."""
    sys.path.insert(0, str(ROOT / "notebooks"))
    from nbgen import figures_saved

    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    for nb in notebooks:
        cells = json.loads(nb.read_text())["cells"]
        n = sum(figures_saved("".join(c["source"])) for c in cells if c["cell_type"] == "code")
        page = built_docs / "notebooks" / f"{nb.stem}.html"
        srcs = re.findall(r'<img[^>]*\bsrc="([^"]+\.png)"', page.read_text())
        assert len(srcs) >= n >= 3, (nb.name, n, len(srcs))
        for src in srcs:
            assert (page.parent / src).resolve().is_file(), (nb.name, src)
