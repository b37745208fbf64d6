from pathlib import Path

import pytest

from helpers import REAL_ROOT
from kernellab.cli import COMMANDS, build_parser, find_root, main


@pytest.mark.parametrize("verb", [command.__name__.rsplit(".", 1)[1] for command in COMMANDS])
def test_every_verb_has_help(verb: str, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([verb, "--help"])
    assert exit_info.value.code == 0
    assert f"usage: kernellab {verb}" in capsys.readouterr().out


def test_no_verb_is_a_usage_error(capsys):
    assert main([]) == 2
    assert "usage: kernellab" in capsys.readouterr().err


def test_an_unknown_option_is_a_usage_error():
    with pytest.raises(SystemExit) as exit_info:
        main(["strip", "--frobnicate"])
    assert exit_info.value.code == 2


def make_root(directory: Path) -> Path:
    (directory / "assignments").mkdir(parents=True)
    (directory / "CMakeLists.txt").write_text("")
    return directory


def test_the_root_is_found_by_walking_up_from_the_working_directory(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("KERNELLAB_ROOT", raising=False)
    root = make_root(tmp_path / "repo")
    start = root / "grader" / "deep"
    start.mkdir(parents=True)
    assert find_root(None, start) == root.resolve()


def test_a_directory_without_cmakelists_is_not_a_root_when_walking_up(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("KERNELLAB_ROOT", raising=False)
    root = make_root(tmp_path / "repo")
    (root / "sub" / "assignments").mkdir(parents=True)
    assert find_root(None, root / "sub") == root.resolve()


def test_the_environment_names_the_root_when_no_option_does(tmp_path: Path, monkeypatch):
    root = make_root(tmp_path / "repo")
    monkeypatch.setenv("KERNELLAB_ROOT", str(root))
    assert find_root(None, tmp_path) == root.resolve()


def test_the_root_option_wins_over_the_environment(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("KERNELLAB_ROOT", str(make_root(tmp_path / "from-env")))
    root = make_root(tmp_path / "from-option")
    assert find_root(str(root), tmp_path) == root.resolve()


def test_a_root_option_without_assignments_is_an_input_error(tmp_path: Path, capsys):
    assert main(["--root", str(tmp_path), "strip"]) == 2
    assert "has no assignments/ directory" in capsys.readouterr().err


def test_no_root_found_is_an_input_error(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.delenv("KERNELLAB_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["strip"]) == 2
    assert "pass --root DIR or set KERNELLAB_ROOT" in capsys.readouterr().err


def test_the_root_option_may_follow_the_verb_and_one_before_it_stays(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.delenv("KERNELLAB_ROOT", raising=False)
    assert build_parser().parse_args(["--root", "before", "strip"]).root == "before"
    assert build_parser().parse_args(["strip", "--root", "after"]).root == "after"
    assert main(["strip", "--root", str(tmp_path)]) == 2
    assert f"{tmp_path} is not a kernellab repository root" in capsys.readouterr().err


def test_a_submission_path_that_does_not_exist_is_a_usage_error_not_a_rejected_grade(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "studnet-ada"
    assert main(["--root", str(REAL_ROOT), "grade", str(missing), "--assignment", "pbb"]) == 2
    assert f"{missing}: no such file or folder" in capsys.readouterr().err
    assert not (tmp_path / "grades").exists(), "no report for a submission that is not there"
