"""The ``fltheory`` command: exit status, report folder, statement listing, figures."""
import json

from fltheory import verify
from fltheory.cli import main


def test_verify_writes_a_report_and_exits_zero(tmp_path, capsys):
    rc = main(["verify", "--quick", "--paper", "local_adaptivity", "--only", "worked_example", "--no-progress",
               "--out", str(tmp_path / "rep")])
    assert rc == 0
    out = capsys.readouterr().out
    assert "worked_example" in out and "1/1 verdicts as expected" in out
    data = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert data["ok"] and len(data["verdicts"]) == 1


def test_verify_exits_nonzero_on_an_unexpected_verdict(tmp_path, monkeypatch):
    check = verify._REGISTRY["local_adaptivity.sgd_decaying_printed"]
    monkeypatch.setattr(check, "expected", "holds")  # the printed (68) is false: now a mismatch
    rc = main(["verify", "--quick", "--paper", "local_adaptivity", "--only", "sgd_decaying_printed", "--no-progress",
               "--out", str(tmp_path / "rep")])
    assert rc == 1
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
