"""Sphinx directives that read the package itself, so the documentation follows the code.

* ``.. fltheory-core-api::`` -- an ``automodule`` for every module of the core (not the papers);
* ``.. fltheory-paper-api:: <paper>`` -- the paper's package and each of its rooms;
* ``.. fltheory-statements:: <paper>`` -- every statement of the paper's ``bounds`` room, with its
  equation number, status and LaTeX;
* ``.. fltheory-checks:: <paper>`` -- every registered check of the paper: the verdict it expects,
  and for the false printed statements which object is false and what still stands.

Docstrings use a few section titles of their own (``Problem class``, ``Method``, ...); a section
title cannot stand inside an autodoc block, so they are shown as rubrics.  A docstring that is not
valid reStructuredText (plain-text math such as ``eta*L`` or ``|x|`` read as markup) is shown
verbatim as a literal block rather than misrendered, and the build warns, naming those docstrings (so
``-W`` fails on one); with ``FLTHEORY_DOCS_STRICT=1`` it reports their warnings instead (to find and fix
them).
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import re

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

LOG = logging.getLogger(__name__)
VERBATIM: list[str] = []  # the docstrings shown verbatim in this build

# the sections numpydoc-style napoleon renders itself
_NAPOLEON = {"args", "arguments", "attention", "attributes", "caution", "danger", "error", "example", "examples",
             "hint", "important", "keyword args", "keyword arguments", "methods", "note", "notes",
             "other parameters", "parameters", "receive", "receives", "return", "returns", "raise", "raises",
             "references", "see also", "tip", "todo", "warning", "warnings", "warns", "yield", "yields"}
_UNDERLINE = re.compile(r"^\s*([-=~^])\1{2,}\s*$")


def rubric_sections(app, what, name, obj, options, lines):
    """Turn the docstring's own section titles (not napoleon's) into rubrics."""
    i = 0
    while i < len(lines) - 1:
        title, under = lines[i], lines[i + 1]
        if title.strip() and _UNDERLINE.match(under) and title.strip().lower() not in _NAPOLEON \
                and (i == 0 or not lines[i - 1].strip()):
            indent = title[: len(title) - len(title.lstrip())]
            lines[i: i + 2] = [f"{indent}.. rubric:: {title.strip()}", ""]
        i += 1


# Sphinx's cross-reference roles (``:func:`x```...): a plain docutils parse does not know them, so the check
# below reads each as an inline literal (Sphinx itself resolves them when it renders the docstring)
_XREF = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const|ref|doc|term|any):`([^`]*)`")


def _rst_problems(text: str) -> list[str]:
    """Warnings docutils raises on ``text``, Sphinx's cross-reference roles read as inline literals."""
    from docutils.core import publish_doctree  # noqa: PLC0415
    from docutils.utils import Reporter  # noqa: PLC0415

    text = _XREF.sub(lambda m: "``" + m.group(1).replace("`", "") + "``", text)

    doctree = publish_doctree(text, settings_overrides={"report_level": Reporter.WARNING_LEVEL,
                                                        "halt_level": Reporter.SEVERE_LEVEL + 1,
                                                        "warning_stream": False})
    found = [m.astext() for m in doctree.findall(nodes.system_message) if m["level"] >= Reporter.WARNING_LEVEL]
    return found + [p.astext() for p in doctree.findall(nodes.problematic)]


def _imported(obj) -> bool:
    """Whether ``obj`` is a class or function from outside the package (SciPy's ``minimize_scalar`` imported
    by a module); data (numbers, tuples) are the module's own."""
    import inspect  # noqa: PLC0415

    if not (inspect.isclass(obj) or inspect.isroutine(obj)):
        return False
    module = getattr(obj, "__module__", None)
    return isinstance(module, str) and module.split(".")[0] != "fltheory"


def skip_imported(app, what, name, obj, skip, options):
    """A module's page documents what the package defines, never what it imports from elsewhere."""
    return True if what == "module" and _imported(obj) else None


def verbatim_if_invalid(app, what, name, obj, options, lines):
    """Show a docstring that is not valid reStructuredText verbatim (after napoleon has converted it)."""
    if not lines or os.environ.get("FLTHEORY_DOCS_STRICT") or _imported(obj):
        return
    try:
        problems = _rst_problems("\n".join(lines))
    except Exception as err:  # noqa: BLE001 - a parser failure is a problem too
        problems = [repr(err)]
    if problems:
        VERBATIM.append(name)
        lines[:] = ["::", ""] + ["    " + line for line in lines] + [""]


def _report_verbatim(app, exception):
    """A docstring shown verbatim is a warning (an error under ``-W``, as the test suite builds)."""
    if exception is None and VERBATIM:
        LOG.warning("fltheory docs: %d docstrings are not valid reStructuredText and are shown verbatim: %s",
                    len(set(VERBATIM)), ", ".join(sorted(set(VERBATIM))))


def _statements(paper: str) -> list:
    import fltheory  # noqa: PLC0415

    return list(fltheory.statements(paper).values())


class _Generated(SphinxDirective):
    required_arguments = 0
    optional_arguments = 1

    def rst(self) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def run(self):
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, StringList(self.rst(), source=f"fltheory_docs:{self.name}"), node)
        return node.children


def _one_line(text: str) -> str:
    """Plain text as one line of reStructuredText: markup characters escaped, and a leading "(25)" or
    "3." escaped so that it is not read as the start of an enumerated list."""
    text = " ".join(str(text).split()).replace("|", "\\|").replace("*", "\\*").replace("`", "'")
    return re.sub(r"^(\(|\d+[.)]|[A-Za-z][.)] )", r"\\\1", text)


def _reexported(module) -> list:
    """The classes and functions that ``module`` lists in ``__all__`` but another module of the package defines
    (a facade's re-exports, e.g. ``fltheory.schedules.round_robin``): documented once, where they are defined."""
    import inspect  # noqa: PLC0415

    names = getattr(module, "__all__", None) or []
    objs = [(n, getattr(module, n, None)) for n in names]
    return [(n, o) for n, o in objs if (inspect.isclass(o) or inspect.isroutine(o))
            and getattr(o, "__module__", module.__name__) != module.__name__ and not _imported(o)]


def _module_sections(package, underline: str, skip=()) -> list[str]:
    """A titled ``automodule`` for every module of ``package`` (sorted by name); a name the module only
    re-exports is listed with a link to where it is defined, not documented twice."""
    out = []
    for m in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if m.name in skip:
            continue
        name = f"{package.__name__}.{m.name}"
        title = f"``{name}``"
        out += [title, underline * len(title), "", f".. automodule:: {name}"]
        again = _reexported(importlib.import_module(name))
        if again:
            links = ", ".join(f":{'class' if isinstance(o, type) else 'func'}:`{o.__module__}.{n}`" for n, o in again)
            out += [f"   :exclude-members: {', '.join(n for n, _ in again)}", "",
                    f"Also importable from ``{name}`` (documented where they are defined): {links}."]
        out += [""]
    return out


class CoreApi(_Generated):
    def rst(self):
        return _module_sections(importlib.import_module("fltheory"), "-", skip=("papers",))


class PaperApi(_Generated):
    required_arguments = 1

    def rst(self):
        name = f"fltheory.papers.{self.arguments[0]}"
        return [f".. automodule:: {name}", "   :no-members:", ""] + _module_sections(importlib.import_module(name), "~")


class Statements(_Generated):
    required_arguments = 1

    def rst(self):
        out = []
        for st in _statements(self.arguments[0]):
            tag = "printed" if st.status == "printed" else f"corrected -- {_one_line(st.reason)}"
            eq = st.equation or ""
            out += [f"* ``{self.arguments[0]}.{st.name}`` {_one_line(eq)} ({tag}). {_one_line(st.title)}", "",
                    "  .. math::", "", f"     {' '.join(st.latex().split())}", ""]
        return out


class Checks(_Generated):
    required_arguments = 1

    def rst(self):
        from fltheory import verify  # noqa: PLC0415

        out = [".. list-table::", "   :header-rows: 1", "   :widths: 22 10 68", "",
               "   * - check", "     - expected", "     - what is compared"]
        for c in verify.registry([self.arguments[0]]):
            what = _one_line(c.description)
            if c.expected == "violated":
                what = f"{what.rstrip('.')}. **False {c.falsifies}.** Still stands: {_one_line(c.still_stands)}"
            out += [f"   * - ``{c.name}``", f"     - {c.expected}", f"     - {what}"]
        return out + [""]


class Coverage(_Generated):
    required_arguments = 1

    def rst(self):
        from fltheory import claims  # noqa: PLC0415

        rows = claims.results([self.arguments[0]])
        if not rows:
            return ["No numbered results are listed for this paper yet.", ""]
        out = [".. list-table::", "   :header-rows: 1", "   :widths: 20 12 38 30", "",
               "   * - result", "     - kind", "     - in words", "     - checked by"]
        for r in rows:
            by = ", ".join(f"``{c}``" for c in r.checks) or f"no check: {_one_line(r.why)}"
            out += [f"   * - {_one_line(r.label)}", f"     - {r.kind}", f"     - {_one_line(r.summary)}", f"     - {by}"]
        n = sum(1 for r in rows if r.checks)
        return out + ["", f"{n} of {len(rows)} numbered results have a check.", ""]


def setup(app):
    app.connect("autodoc-process-docstring", rubric_sections, priority=400)  # before napoleon (500)
    app.connect("autodoc-process-docstring", verbatim_if_invalid, priority=900)  # after napoleon
    app.connect("build-finished", _report_verbatim)
    app.connect("autodoc-skip-member", skip_imported)
    app.add_directive("fltheory-core-api", CoreApi)
    app.add_directive("fltheory-paper-api", PaperApi)
    app.add_directive("fltheory-statements", Statements)
    app.add_directive("fltheory-checks", Checks)
    app.add_directive("fltheory-coverage", Coverage)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
