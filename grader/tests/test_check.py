import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import REAL_ROOT, has_gpu, has_nvcc
from kernellab import release_check as check
from kernellab.cli import main
from kernellab.known_wrong import Row
from kernellab.manifest import load_assignment
from kernellab.release_check import CHECKS, CheckResult, Context, run_check
from kernellab.scaffold import scaffold
from kernellab.verdict import Verdict

PASSED, FAILED, NO_GPU, NOT_REJECTED, REJECTED = (
    Verdict.PASSED, Verdict.FAILED, Verdict.NO_GPU, Verdict.NOT_REJECTED, Verdict.REJECTED
)


def make_root(directory: Path) -> Path:
    """A repository with the real build files and package, and no assignment yet."""
    (directory / "assignments").mkdir(parents=True)
    shutil.copy(REAL_ROOT / "CMakeLists.txt", directory)
    for name in ("grader/harness", "grader/kernellab"):
        shutil.copytree(REAL_ROOT / name, directory / name, ignore=shutil.ignore_patterns("__pycache__"))
    return directory


@pytest.fixture
def starter_root(tmp_path: Path) -> Path:
    root = make_root(tmp_path / "repo")
    scaffold(root, "demo", None)
    return root


def context_of(root: Path, tmp_path: Path, total_points: int = 100) -> Context:
    assignment = load_assignment(root, "demo")
    return Context(assignment, tmp_path / "work", [], total_points, runs_kernels=False, backend="no GPU")


def verdict_of(name: str, context: Context) -> CheckResult:
    return run_check(next(entry for entry in CHECKS if entry.name == name), context)


def test_the_checks_that_need_no_build_pass_on_a_fresh_scaffold(starter_root: Path, tmp_path: Path):
    context = context_of(starter_root, tmp_path)
    assert verdict_of("manifest", context).verdict == PASSED
    assert verdict_of("skeleton up to date", context).verdict == PASSED
    assert verdict_of("points", context) == CheckResult(PASSED, "100 = 100")
    contents = verdict_of("handout contents", context)
    assert contents.verdict == PASSED
    assert {"skeleton/demo/ (1 files)", "kernellab", "README.md"} <= set(contents.detail.splitlines())
    assert verdict_of("known-wrong rejected", context) == CheckResult(NO_GPU, "3 known-wrong versions apply; none was run")


def test_points_that_do_not_add_up_fail_naming_the_declared_total(starter_root: Path, tmp_path: Path):
    verdict = verdict_of("points", context_of(starter_root, tmp_path, total_points=60))
    assert verdict == CheckResult(FAILED, "100 = 100, not 60 (declare another total with --points)")


def test_a_hand_edited_skeleton_fails_naming_the_file(starter_root: Path, tmp_path: Path):
    (starter_root / "skeleton" / "demo" / "kernels.cuh").write_text("// edited by hand\n")
    verdict = verdict_of("skeleton up to date", context_of(starter_root, tmp_path))
    assert verdict.verdict == FAILED
    assert "kernels.cuh" in verdict.detail and "kernellab strip demo" in verdict.detail


def test_a_marker_error_fails_the_skeleton_check_with_file_and_line(starter_root: Path, tmp_path: Path):
    reference = starter_root / "reference" / "demo" / "kernels.cuh"
    reference.write_text(reference.read_text().replace("    // END SOLUTION\n", ""))
    verdict = verdict_of("skeleton up to date", context_of(starter_root, tmp_path))
    assert verdict.verdict == FAILED
    assert "kernels.cuh:21: error: stub line is not commented out" in verdict.detail


def test_the_manifest_check_names_each_missing_file(starter_root: Path, tmp_path: Path):
    (starter_root / "assignments" / "demo" / "tests" / "test_saxpy.cu").unlink()
    (starter_root / "handout" / "demo.md").unlink()
    verdict = verdict_of("manifest", context_of(starter_root, tmp_path))
    assert verdict.verdict == FAILED
    assert verdict.detail.splitlines() == [
        "missing: assignments/demo/tests/test_saxpy.cu (task saxpy)",
        "handout/demo.md (the task text)",
    ]


def test_a_patch_that_no_longer_applies_fails_the_known_wrong_check(starter_root: Path, tmp_path: Path):
    reference = starter_root / "reference" / "demo" / "kernels.cuh"
    reference.write_text(reference.read_text().replace("if (i < n)", "if (n > i)"))
    verdict = verdict_of("known-wrong rejected", context_of(starter_root, tmp_path))
    assert verdict.verdict == FAILED
    # Every patch that no longer applies is named, not only the first.
    assert [line.split(":")[0].rsplit("/", 1)[-1] for line in verdict.detail.splitlines()] == [
        "block-index-ignored.patch",
        "factor-dropped.patch",
        "writes-past-the-end.patch",
    ]


def test_a_task_without_known_wrong_versions_fails_the_check(starter_root: Path, tmp_path: Path):
    shutil.rmtree(starter_root / "assignments" / "demo" / "wrong")
    verdict = verdict_of("known-wrong rejected", context_of(starter_root, tmp_path))
    assert verdict == CheckResult(FAILED, "no known-wrong version for task(s) saxpy")


def test_a_handout_that_would_leak_the_reference_fails_the_contents_check(starter_root: Path, tmp_path: Path):
    shutil.copy(starter_root / "reference" / "demo" / "kernels.cuh", starter_root / "assignments" / "demo" / "tests")
    verdict = verdict_of("handout contents", context_of(starter_root, tmp_path))
    assert verdict.verdict == FAILED
    assert "assignments/demo/tests/kernels.cuh: a solution marker: a reference file" in verdict.detail


def fake_wrong_versions(monkeypatch, verdicts: list[str], expected_jobs: int = 1) -> None:
    def check_versions(assignment, versions, work, cmake_args, jobs):
        assert jobs == expected_jobs
        return [
            Row(task.id, patch_file.stem, "a bug", verdict, ["caught by a test"] if verdict == REJECTED else [])
            for (task, patch_file), verdict in zip(versions, verdicts)
        ]

    monkeypatch.setattr(check.known_wrong, "check_versions", check_versions)


def test_with_kernels_every_known_wrong_version_rejected_is_a_strength_of_100_percent(
    starter_root: Path, tmp_path: Path, monkeypatch
):
    fake_wrong_versions(monkeypatch, [REJECTED] * 3)
    context = replace(context_of(starter_root, tmp_path), runs_kernels=True, backend="kernels run on the GPU")
    verdict = verdict_of("known-wrong rejected", context)
    assert verdict.verdict == PASSED
    lines = verdict.detail.splitlines()
    assert lines[0] == "test-suite strength 3/3 (100%), kernels run on the GPU"
    assert "saxpy  factor-dropped       a bug        rejected  caught by a test" in lines
    assert lines[-1] == "test-suite strength: 3/3 rejected"


def test_the_known_wrong_versions_are_checked_with_the_jobs_asked_for(starter_root: Path, tmp_path: Path, monkeypatch):
    fake_wrong_versions(monkeypatch, [REJECTED] * 3, expected_jobs=3)
    context = replace(context_of(starter_root, tmp_path), runs_kernels=True, jobs=3)
    assert verdict_of("known-wrong rejected", context).verdict == PASSED


def test_with_kernels_one_known_wrong_version_not_rejected_fails_the_check(
    starter_root: Path, tmp_path: Path, monkeypatch
):
    fake_wrong_versions(monkeypatch, [REJECTED, NOT_REJECTED, REJECTED])
    context = replace(context_of(starter_root, tmp_path), runs_kernels=True)
    verdict = verdict_of("known-wrong rejected", context)
    assert verdict.verdict == FAILED
    assert verdict.detail.splitlines()[0] == "test-suite strength 2/3: must be 100% to release"


def test_exit_codes_distinguish_failed_from_not_run():
    assert check.exit_code([CheckResult(PASSED), CheckResult(PASSED)]) == 0
    assert check.exit_code([CheckResult(PASSED), CheckResult(NO_GPU)]) == 3
    assert check.exit_code([CheckResult(NO_GPU), CheckResult(FAILED)]) == 1


def test_without_a_gpu_the_cpu_backend_runs_the_kernels_when_there_is_one(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(check.environment, "gpus", lambda: [])
    assert check.kernel_backend("auto", tmp_path) == (False, "no GPU: kernels do not run here", [])
    (tmp_path / "grader" / "cpu").mkdir(parents=True)
    (tmp_path / "grader" / "cpu" / "CMakeLists.txt").write_text("")
    cpu_backend = (True, "kernels run on the CPU backend", ["-DKERNELLAB_BACKEND=cpu"])
    assert check.kernel_backend("auto", tmp_path) == cpu_backend
    assert check.kernel_backend("cuda", tmp_path) == (False, "no GPU: kernels do not run here", [])
    monkeypatch.setattr(check.environment, "gpus", lambda: [{"name": "a GPU"}])
    assert check.kernel_backend("auto", tmp_path) == (True, "kernels run on the GPU", [])
    assert check.kernel_backend("cpu", tmp_path) == cpu_backend


def test_the_report_is_one_table_with_long_details_below():
    rows = [("points", CheckResult(PASSED, "100 = 100")), ("manifest", CheckResult(FAILED, "missing: a\nb"))]
    assert check.format_report(rows).splitlines() == [
        "check     verdict  detail",
        "points    passed   100 = 100",
        "manifest  FAILED   missing: a",
        "",
        "manifest: FAILED",
        "    missing: a",
        "    b",
    ]


def test_check_documents_its_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert "exit codes:" in out and "3  no check failed, but some did not run here" in out
    assert "--jobs N" in out


# The real thing: scaffold an assignment and check it, builds and handout included.


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cmake") is None or not has_nvcc(), reason="needs nvcc and cmake")
def test_a_fresh_scaffold_passes_every_check_that_can_run_here(starter_root: Path, tmp_path: Path, capsys):
    architecture = "native" if has_gpu() else "75-real"
    argv = ["--root", str(starter_root), "check", "demo", "--build-dir", str(tmp_path / "work")]
    exit_code = main(argv + [f"--cmake-arg=-DCMAKE_CUDA_ARCHITECTURES={architecture}"])
    out = capsys.readouterr().out
    table = out[out.index("\ncheck ") + 1 :].split("\n\n")[0].splitlines()[1:]
    verdicts = {line[:28].strip(): line[28:45].strip() for line in table}
    kernels = PASSED if has_gpu() else NO_GPU
    assert verdicts == {
        "manifest": PASSED,
        "skeleton up to date": PASSED,
        "reference passes": kernels,
        "skeleton fails as declared": kernels,
        "known-wrong rejected": kernels,
        "points": PASSED,
        "speed calibration": PASSED,
        "handout contents": PASSED,
        "handout builds": kernels,
    }, out
    assert exit_code == (0 if has_gpu() else 3), out
    if not has_gpu():
        assert "builds; 1 of 1 tasks need a GPU to run" in out
