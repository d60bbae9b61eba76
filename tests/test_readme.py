"""Every Python example of README.md runs as written (the rebuild snippet needs a report's params: it is
exercised by tests/test_report.py instead, and the bring-your-own-bound block by tests/test_testing.py)."""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


@pytest.mark.parametrize("block", [b for b in BLOCKS if "verify.rebuild" not in b and "BoundViolated" not in b],
                         ids=lambda b: b.splitlines()[-1][:40])
def test_readme_example_runs(block, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(block, str(README), "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip()    # every example prints what it computes


def test_readme_has_the_examples_it_promises():
    assert len(BLOCKS) >= 5


def test_readme_counts_the_registered_checks():
    """The README's number of checks is the registry's."""
    from pathlib import Path

    from fltheory import verify

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert f"`fltheory verify` has {len(verify.registry())} checks over the five papers" in text
