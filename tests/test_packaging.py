"""Ready to publish (issue 23): one version written once and quoted by the changelog and the citation file,
matplotlib in the base install, and `python -m build` archives whose wheel installs into a fresh virtual
environment and runs `fltheory verify --quick` from outside the repository.

The build-and-install test (marked slow) copies the tracked files into a temporary folder and builds there,
so nothing is written into the repository. It runs one paper's checks from the installed wheel; with
``FLTHEORY_PACKAGE_TEST=1`` (before a release; too long for the suite's 10 minutes) it runs the whole
``fltheory verify --quick``.
"""
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import fltheory

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_version_is_written_once_and_quoted_by_the_changelog_and_the_citation():
    project = _pyproject()
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "fltheory.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]\d+|rc\d+)?", fltheory.__version__)
    newest = re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert newest and newest.group(1) == fltheory.__version__
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^cff-version: 1\.2\.0$", cff, re.M) and re.search(r"^title: .+", cff, re.M)
    assert re.search(r"^authors:\n  - ", cff, re.M)
    assert re.search(r'^version: "?([^"\n]+)"?$', cff, re.M).group(1) == fltheory.__version__


def test_matplotlib_is_in_the_base_install():
    """The README's first command (`pip install -e . && fltheory verify`) promises figures."""
    deps = [re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0].lower() for d in _pyproject()["project"]["dependencies"]]
    assert "matplotlib" in deps
    readme = (ROOT / "README.md").read_text()
    assert "pip install -e . && fltheory verify" in readme and "(Markdown, JSON and figures)" in readme


def test_the_readme_quotes_no_wall_time():
    """Wall times depend on the machine and its load: the README quotes none (each run prints its own)."""
    readme = (ROOT / "README.md").read_text()
    found = re.findall(r"\babout [\d.,]+ ?(?:s|seconds?|min|minutes?|h|hours?)\b", readme)
    assert found == []
    assert "each run prints its own" in readme


def _tracked_copy(dest: Path) -> Path:
    """The files git tracks (and untracked ones it does not ignore), copied into ``dest``."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the files to package cannot be listed")
    names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = ROOT / name
        if src.is_file() and not src.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


@pytest.mark.slow
def test_build_makes_an_sdist_and_a_wheel_that_install_and_verify(tmp_path):
    for module in ("build", "wheel", "setuptools"):
        pytest.importorskip(module, reason="the test extra (pip install -e '.[test]') is not installed")
    src = _tracked_copy(tmp_path / "src")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    run = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path / "dist"),
                          str(src)], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    version = fltheory.__version__
    sdist = tmp_path / "dist" / f"fltheory-{version}.tar.gz"
    (wheel,) = (tmp_path / "dist").glob(f"fltheory-{version}-py3-none-any.whl")
    assert sdist.is_file()
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata = zf.read(f"fltheory-{version}.dist-info/METADATA").decode()
        entry_points = zf.read(f"fltheory-{version}.dist-info/entry_points.txt").decode()
    assert "fltheory/papers/tdma/checks.py" in names and not any(n.startswith("tests/") for n in names)
    assert re.search(r"^Requires-Dist: matplotlib", metadata, re.M) and f"Version: {version}" in metadata
    assert "fltheory = fltheory.cli:main" in entry_points

    venv = tmp_path / "venv"    # the dependencies come from this interpreter's site-packages: no download
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / "python"
    run = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    where = subprocess.run([str(python), "-c", "import fltheory; print(fltheory.__file__); print(fltheory.__version__)"],
                           cwd=outside, env=env, capture_output=True, text=True, timeout=120, check=True).stdout.split()
    assert Path(where[0]).resolve().is_relative_to(venv.resolve()) and where[1] == version
    full = os.environ.get("FLTHEORY_PACKAGE_TEST") == "1"
    args = ["verify", "--quick", "--out", str(outside / "rep")] + ([] if full else ["--paper", "tdma"])
    run = subprocess.run([str(bindir / "fltheory"), *args], cwd=outside, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    assert re.search(r"^(\d+)/\1 verdicts as expected", run.stdout, re.M), run.stdout[-2000:]
    assert (outside / "rep" / "figures" / "verdicts.png").is_file()   # matplotlib came with the install
    assert "\r" not in run.stderr


def test_import_from_the_folder_that_holds_the_clone(tmp_path):
    """Python or Jupyter started in the folder that holds the clone (``~/code`` for ``~/code/fltheory``) imports the
    installed package, not the clone's folder as an empty namespace package: the src layout keeps the package one
    level down, and the installed path wins over the namespace portion the clone's folder would be."""
    (tmp_path / "fltheory").symlink_to(ROOT, target_is_directory=True)   # the clone, under the package's name
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", "import fltheory; print(fltheory.__file__); "
                          "print(callable(fltheory.statement))"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    where, has = out.stdout.split()
    assert where != "None" and has == "True"
    assert not ROOT.joinpath("fltheory").exists()   # nothing at the clone's top level under the package's name
