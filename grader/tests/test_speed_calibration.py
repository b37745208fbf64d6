"""The reference's speed per GPU model (assignments/<id>/speed/reference-speed.toml): the file that
`kernellab calibrate` writes, and the preview of speed points that `kernellab test` prints from it."""

from datetime import datetime, timezone
from pathlib import Path

import pytest

from helpers import has_gpu, write_files
from kernellab import calibrate, cmake, environment, public_tests, release_check
from kernellab.cli import main
from kernellab.errors import InputError
from kernellab.grading.speed import timing
from kernellab.grading.speed.calibration import (NOT_CALIBRATED, Calibration, NoPreview, calibration_for,
                                                  format_calibrations, preview, read_calibrations)
from kernellab.grading.speed.timing import COPY_BASELINE, speed_points
from kernellab.manifest import SpeedCase, load_assignment
from kernellab.verdict import Verdict
from test_speed_clock import program

H100 = "NVIDIA H100 80GB HBM3"
MAP = SpeedCase(task="alpha", case="map", sizes=(1024, 4096), points=4, zero_at=4.0, full_at=1.2)
# What `kernellab calibrate` writes, by hand: the reference's time over the copy kernel's.
CALIBRATION_TEXT = """\
[gpu."NVIDIA H100 80GB HBM3"]
measured = 2026-05-01T12:00:00+00:00
driver = "550.54.15"
cuda = "12.4"
kernellab_commit = "81ad38d21e2297e79667d2f485412228b71feb92"

[gpu."NVIDIA H100 80GB HBM3".reference_over_copy]
map = { 1024 = 1.5, 4096 = 2.0 }

[gpu."NVIDIA A100-SXM4-40GB"]
measured = 2026-04-02T08:30:00+00:00
driver = "535.104.05"
cuda = "12.2"
kernellab_commit = "7ee2184"

[gpu."NVIDIA A100-SXM4-40GB".reference_over_copy]
map = { 1024 = 1.4 }
"""
SPEED_ENTRY = """
[[speed]]
task = "alpha"
case = "map"
sizes = [1024, 4096]
points = 4
zero_at = 4.0
full_at = 1.2
"""


@pytest.fixture
def speed_repo(make_repo) -> Path:
    """A fixture repository whose assignment x times the case `map` of task alpha (MAP)."""
    root = make_repo({})
    manifest = root / "assignments" / "x" / "assignment.toml"
    manifest.write_text(manifest.read_text() + SPEED_ENTRY)
    return root


def calibration_file(root: Path, text: str = CALIBRATION_TEXT) -> Path:
    path = root / "assignments" / "x" / "speed" / "reference-speed.toml"
    write_files(path.parent, {path.name: text})
    return path


def test_a_calibration_file_reads_back_what_was_written(tmp_path: Path):
    odd = Calibration('a "quoted" \\ GPU', datetime(2026, 5, 1, 12, tzinfo=timezone.utc), "550", "12.4", "abc-dirty",
                      {("mapReduce<Add<int>>", 16777216): 1.23456, ("scan \"inc\"", 268435456): 2.5})
    plain = Calibration(H100, datetime(2026, 4, 2, 8, 30, tzinfo=timezone.utc), "535", "12.2", "7ee2184", {})
    path = tmp_path / "reference-speed.toml"
    path.write_text(format_calibrations({H100: plain, odd.gpu: odd}))
    text = path.read_text()
    assert text.startswith("# The reference's speed per GPU model") and "no code" in text
    assert text.index(odd.gpu.split()[0]) < text.index(H100), "entries in the order of their names"
    read = read_calibrations(path)
    assert read[H100] == plain
    assert read[odd.gpu].reference_over_copy == {("mapReduce<Add<int>>", 16777216): 1.2346, ("scan \"inc\"", 268435456): 2.5}


@pytest.mark.parametrize("text, complaint", [
    ("[gpu.x\n", "not a speed calibration file: "),
    ('gpus = "H100"\n', "gpus: unknown key (allowed: gpu)"),
    ('[gpu."H100"]\nmeasured = 2026-05-01T12:00:00Z\ncuda = "12"\nkernellab_commit = "a"\nreference_over_copy = {}\n',
     'gpu."H100".driver: missing'),
    ('[gpu."H100"]\nmeasured = "May"\ndriver = "1"\ncuda = "12"\nkernellab_commit = "a"\nreference_over_copy = {}\n',
     'gpu."H100".measured: expected a date and time'),
    (CALIBRATION_TEXT.replace("1024 = 1.5", '1024 = "1.5"'), 'gpu."NVIDIA H100 80GB HBM3".reference_over_copy."map".1024: expected size'),
    (CALIBRATION_TEXT.replace("1024 = 1.5", "1024 = -1.5"), "expected size = a positive ratio"),
    (CALIBRATION_TEXT.replace("4096 = 2.0", "big = 2.0"), "reference_over_copy.\"map\".big: expected size"),
    (CALIBRATION_TEXT.replace("map = { 1024 = 1.5, 4096 = 2.0 }", "map = 1.5"), "expected a table of size = ratio"),
])
def test_a_malformed_calibration_file_is_an_error_naming_the_file(tmp_path: Path, text: str, complaint: str):
    path = tmp_path / "reference-speed.toml"
    path.write_text(text)
    with pytest.raises(InputError) as raised:
        read_calibrations(path)
    assert str(raised.value).startswith(f"{path}: error: ") and complaint in str(raised.value)


def test_the_preview_predicts_the_reference_from_the_copy_kernel_and_scores_as_the_grade(speed_repo: Path):
    calibration_file(speed_repo)
    entry = calibration_for(load_assignment(speed_repo, "x"), H100)
    # Copy kernel and student timed here; the H100's reference takes 1.5 and 2.0 copies.
    times = {(COPY_BASELINE, 1024): 10.0, ("map", 1024): 15.0, (COPY_BASELINE, 4096): 100.0, ("map", 4096): 400.0}
    small, large = preview([MAP], times, entry)
    assert (small.reference_us, small.ratio, small.points, small.max_points) == (15.0, 1.0, 2.0, 2.0)
    # 2.0 on the log scale from 1.2 to 4.0 keeps log(4/2)/log(4/1.2) = 58% of 2 points: 1.0 in tenths.
    assert (large.reference_us, large.ratio, large.points) == (200.0, 2.0, 1.0)
    assert [row.points for row in (small, large)] == [speed_points(MAP, 1.0), speed_points(MAP, 2.0)]
    assert (large.task, large.case, large.size, large.copy_us, large.student_us) == ("alpha", "map", 4096, 100.0, 400.0)


def test_a_size_the_calibration_lacks_earns_nothing_in_the_preview_and_says_why(speed_repo: Path):
    calibration_file(speed_repo)
    entry = calibration_for(load_assignment(speed_repo, "x"), "NVIDIA A100-SXM4-40GB")
    times = {(COPY_BASELINE, 1024): 10.0, ("map", 1024): 14.0, (COPY_BASELINE, 4096): 100.0, ("map", 4096): 400.0}
    calibrated, missing = preview([MAP], times, entry)
    assert calibrated.points == 2.0 and calibrated.problem == ""
    assert (missing.reference_us, missing.points, missing.problem) == (None, 0.0, NOT_CALIBRATED)


def test_without_this_gpu_s_entry_or_without_a_file_there_is_no_preview(speed_repo: Path):
    assignment = load_assignment(speed_repo, "x")
    with pytest.raises(NoPreview, match="the assignment has no calibration of the reference's speed"):
        calibration_for(assignment, H100)
    calibration_file(speed_repo)
    with pytest.raises(NoPreview, match=r"has no calibration for NVIDIA L4 \(it has: NVIDIA A100-SXM4-40GB, NVIDIA H100 80GB HBM3\)"):
        calibration_for(assignment, "NVIDIA L4")
    with pytest.raises(NoPreview, match="nvidia-smi does not name this GPU"):
        calibration_for(assignment, None)


def print_preview(root: Path, gpu: str, monkeypatch) -> list:
    monkeypatch.setattr(environment, "first_gpu", lambda: {"name": gpu})
    times = {(COPY_BASELINE, 1024): 10.0, ("map", 1024): 15.0, (COPY_BASELINE, 4096): 100.0, ("map", 4096): 400.0}
    return public_tests.print_points_preview(load_assignment(root, "x"), [MAP], times)


def test_kernellab_test_prints_the_preview_with_the_calibration_it_comes_from(speed_repo: Path, monkeypatch, capsys):
    calibration_file(speed_repo)
    scored = print_preview(speed_repo, H100, monkeypatch)
    out = capsys.readouterr().out
    assert "the grade times the reference itself in the same run" in out
    assert f"calibration on {H100} (2026-05-01)" in out
    assert [line.split() for line in out.splitlines() if line.startswith("map ")] == [
        ["map", "1024", "10.0", "15.0", "15.0", "1.00", "2", "of", "2"],
        ["map", "4096", "100.0", "200.0", "400.0", "2.00", "1", "of", "2"],
    ]
    assert "map: 3 of 4 speed points" in out
    assert [row.points for row in scored] == [2.0, 1.0]


@pytest.mark.parametrize("text, says", [
    (None, "no preview of speed points: the assignment has no calibration of the reference's speed"),
    (CALIBRATION_TEXT.replace(H100, "NVIDIA H200"), "has no calibration for NVIDIA H100 80GB HBM3 (it has: NVIDIA A100-SXM4-40GB, NVIDIA H200)"),
    ("[gpu.x\n", "reference-speed.toml: error: not a speed calibration file"),
])
def test_without_a_preview_kernellab_test_says_why_in_one_line(speed_repo: Path, monkeypatch, capsys, text, says):
    if text is not None:
        calibration_file(speed_repo, text)
    assert print_preview(speed_repo, H100, monkeypatch) == []
    lines = [line for line in capsys.readouterr().out.splitlines() if line]
    assert len(lines) == 1 and says in lines[0], lines


@pytest.mark.skipif(has_gpu(), reason="this machine has a GPU")
def test_calibrate_refuses_without_a_gpu(speed_repo: Path, capsys):
    assert main(["--root", str(speed_repo), "calibrate", "x"]) == 2
    assert "kernellab calibrate times the reference on a GPU, and nvidia-smi finds none here" in capsys.readouterr().err
    assert not (speed_repo / "assignments" / "x" / "speed").exists()


def fake_gpu_build(monkeypatch, backend: str) -> list:
    """A GPU named "NVIDIA H100 80GB HBM3", and CMake configuring for `backend`; the configure calls."""
    monkeypatch.setattr(environment, "first_gpu", lambda: {"name": H100, "driver_version": "550.54.15"})
    calls = []

    def configure(root, build_dir, *args):
        calls.append(build_dir)
        write_files(build_dir, {"CMakeCache.txt": f"KERNELLAB_BACKEND:STRING={backend}\n"})

    monkeypatch.setattr(cmake, "configure", configure)
    return calls


def test_calibrate_refuses_the_cpu_backend(speed_repo: Path, monkeypatch, capsys):
    fake_gpu_build(monkeypatch, "cpu")
    assert main(["--root", str(speed_repo), "calibrate", "x", "--cmake-arg=-DKERNELLAB_BACKEND=cpu"]) == 2
    assert "the CPU backend gives no speed" in capsys.readouterr().err


def test_calibrate_refuses_an_assignment_without_speed_cases_and_a_malformed_file_before_building(
        speed_repo: Path, make_repo, monkeypatch, capsys):
    configured = fake_gpu_build(monkeypatch, "cuda")
    calibration_file(speed_repo, "[gpu.x\n")
    assert main(["--root", str(speed_repo), "calibrate", "x"]) == 2
    assert "reference-speed.toml: error: not a speed calibration file" in capsys.readouterr().err
    manifest = speed_repo / "assignments" / "x" / "assignment.toml"
    manifest.write_text(manifest.read_text().replace(SPEED_ENTRY, ""))
    assert main(["--root", str(speed_repo), "calibrate", "x"]) == 2
    assert "x has no [[speed]] cases" in capsys.readouterr().err
    assert configured == []


def test_calibrate_times_the_reference_and_the_copy_kernel_and_keeps_other_gpus_entries(
        speed_repo: Path, tmp_path: Path, monkeypatch, capsys):
    fake_gpu_build(monkeypatch, "cuda")
    monkeypatch.setattr(timing, "REPETITIONS", 3)
    # A speed program speaking the harness's protocol, every call as long: the reference as fast as a copy.
    monkeypatch.setattr(calibrate, "build_speed_program", lambda assignment_id, build_dir: program(tmp_path, call_s=0.01))
    path = calibration_file(speed_repo, CALIBRATION_TEXT.replace(H100, "NVIDIA H200"))
    assert main(["--root", str(speed_repo), "calibrate", "x", "--build-dir", str(tmp_path / "build")]) == 0
    entries = read_calibrations(path)
    assert sorted(entries) == ["NVIDIA A100-SXM4-40GB", H100, "NVIDIA H200"]
    measured = entries[H100]
    assert sorted(measured.reference_over_copy) == [("map", 1024), ("map", 4096)]
    assert all(0.5 < ratio < 2.0 for ratio in measured.reference_over_copy.values()), measured
    assert (measured.driver, measured.kernellab_commit) == ("550.54.15", calibrate.UNKNOWN_COMMIT)
    assert (tmp_path / "build" / "speed" / "speed.log").read_text().count("serving") == timing.ROUNDS
    assert f"wrote the reference's speed on {H100}" in capsys.readouterr().out


def check_row(root: Path):
    """`kernellab check`'s speed calibration row for assignment x."""
    context = release_check.Context(load_assignment(root, "x"), root / "build", [], 100, False, "")
    return release_check.check_speed_calibration(context)


def test_check_passes_a_calibration_of_every_speed_case_and_size_and_says_when_there_is_none(speed_repo: Path):
    none = check_row(speed_repo)
    assert none.verdict == Verdict.PASSED and "no preview" in none.detail and "kernellab calibrate x" in none.detail
    calibration_file(speed_repo, CALIBRATION_TEXT.replace("map = { 1024 = 1.4 }", "map = { 1024 = 1.4, 4096 = 1.9 }"))
    in_step = check_row(speed_repo)
    assert in_step.verdict == Verdict.PASSED and H100 in in_step.detail


def test_check_fails_a_calibration_that_lacks_a_timed_size_or_names_one_no_longer_timed(speed_repo: Path):
    # The A100's entry lacks size 4096; then the manifest stops timing 1024 and the H100's has it.
    calibration_file(speed_repo)
    row = check_row(speed_repo)
    assert row.verdict == Verdict.FAILED
    assert "NVIDIA A100-SXM4-40GB has no ratio for map at size 4096" in row.detail
    assert "calibrate x` again" in row.detail
    manifest = speed_repo / "assignments" / "x" / "assignment.toml"
    manifest.write_text(manifest.read_text().replace("sizes = [1024, 4096]", "sizes = [4096]"))
    assert f"{H100} has a ratio for map at size 1024, which the manifest does not time" in check_row(speed_repo).detail
