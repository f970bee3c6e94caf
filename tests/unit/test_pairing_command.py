"""The command a pairing screen shows names the ``lineup`` a newcomer actually has."""

from pathlib import Path

from lineup.hub.pairing import lineup_program


def _checkout(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "my checkout" / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "lineup").write_text("#!/bin/sh\n")
    return bin_dir


def test_a_checkouts_hub_names_its_venv_lineup_relative_to_where_it_started(tmp_path: Path):
    bin_dir = _checkout(tmp_path)
    started_in = tmp_path / "my checkout"
    program = lineup_program(str(bin_dir / "python"), started_in, which=lambda _: None)
    assert program == ".venv/bin/lineup"


def test_the_bare_name_when_that_is_the_lineup_on_the_path(tmp_path: Path):
    bin_dir = _checkout(tmp_path)
    on_path = str(bin_dir / "lineup")
    assert lineup_program(str(bin_dir / "python"), tmp_path, which=lambda _: on_path) == "lineup"


def test_another_lineup_on_the_path_does_not_hide_the_hubs_own(tmp_path: Path):
    bin_dir = _checkout(tmp_path)
    elsewhere = tmp_path / "other dir"
    elsewhere.mkdir()
    program = lineup_program(str(bin_dir / "python"), elsewhere, which=lambda _: "/usr/bin/lineup")
    assert program == f"'{bin_dir / 'lineup'}'"


def test_an_installed_hub_without_a_lineup_beside_it_says_lineup(tmp_path: Path):
    assert lineup_program(str(tmp_path / "python"), tmp_path, which=lambda _: None) == "lineup"
