"""The pbb tests against each year's shape of the PMPH course's API (compat fixtures written by
course_api/years.py), on the CPU backend: they build (and pass nvcc's front end where nvcc is
installed), the given code and the solved tasks pass, and what the course's code does not
promise is reported as not applicable, by the probes and by the tests; a probe made to fail
alone is overruled by the tests' records. Two test executables per year and few sizes
(KERNELLAB_SIZES, KERNELLAB_BLOCK_SIZES) keep it to minutes."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REAL_ROOT
from kernellab import applicability, runner
from kernellab.backend import Backend
from kernellab.grading.building import student_role_args, unmet_conditions
from kernellab.manifest import load_assignment
from kernellab.records import read_records

sys.path.insert(0, str(Path(__file__).parent / "course_api"))
from years import write_fixture  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ninja") is None, reason="needs cmake and ninja"),
]

# Per shape: the test executables run, and the probes its code leaves unmet. Every shape's Mssp
# takes volatile references (no LiftOP<Mssp>); 24 words per thread need 96 KB with 1024 threads.
PLANS = {
    2020: (("given", "scan_block"), {"lifted_mssp"}),
    2024: (("sgm_scan", "copy"), {"lifted_mssp", "host_block_1024"}),
    2025: (("scan_warp", "scan_multi"), {"lifted_mssp", "host_block_1024"}),
}
# Sizes and block sizes the runs use: a partial warp, a partial block, and a block size on each
# side of the shared-memory limit.
RUN_ENVIRONMENT = {"KERNELLAB_SIZES": "33,1025", "KERNELLAB_BLOCK_SIZES": "64,1024", "KERNELLAB_CPU_ORDERS": "2"}


def configure(solution: Path, assignment: str, build: Path, *arguments: str) -> None:
    """Configure the CPU backend's build of `assignment`'s tests against `solution`."""
    configured = subprocess.run(
        ["cmake", "-S", str(REAL_ROOT), "-B", str(build), "-G", "Ninja", "-DKERNELLAB_BACKEND=cpu",
         f"-DKERNELLAB_ASSIGNMENTS={assignment}", f"-DKERNELLAB_SOLUTION={solution}", *arguments],
        capture_output=True, text=True,
    )
    assert configured.returncode == 0, configured.stdout + configured.stderr


def build_targets(build: Path, targets: list[str]) -> str:
    """Build `targets`, going on past one that fails; the build's output."""
    built = subprocess.run(["cmake", "--build", str(build), "--target", *targets, "--", "-k", "0"],
                           capture_output=True, text=True)
    return built.stdout + built.stderr


def run_test(build: Path, assignment: str, name: str, *test_cases: str, **environment: str) -> subprocess.CompletedProcess:
    """One test executable of `assignment` (its `test_cases`, or all), run with RUN_ENVIRONMENT and
    `environment`."""
    return subprocess.run([str(build / "assignments" / assignment / f"{assignment}_test_{name}"), *test_cases],
                          capture_output=True, text=True, env={**os.environ, **RUN_ENVIRONMENT, **environment},
                          timeout=1200)


@pytest.mark.parametrize("year", sorted(PLANS))
def test_the_pbb_tests_build_and_pass_against_the_course_api_of(year, tmp_path):
    executables, expected_unmet = PLANS[year]
    solution = tmp_path / "solution"
    write_fixture(year, solution)
    build = tmp_path / "build"
    configure(solution, "pbb", build)
    probes = applicability.probe_targets(build, "pbb")
    assert len(probes) == len(applicability.CONDITIONS)
    output = build_targets(build, [f"pbb_test_{name}" for name in executables] + probes)

    for name in executables:
        assert (build / "assignments" / "pbb" / f"pbb_test_{name}").is_file(), f"pbb_test_{name} did not build:\n{output}"
    assert {condition.probe for condition in applicability.unmet(build, "pbb", output)} == expected_unmet

    for name in executables:
        ran = run_test(build, "pbb", name)
        if name == "scan_block":
            # The course fixes its race with a fourth barrier, which pbb's task forbids ("fix it
            # without adding a __syncthreads()"; pmph-w2, the course's own, allows it): the barrier
            # count (of Add<int> and of Mssp) is all that fails.
            failures = ran.stdout.split("FAILED:")[1:]
            assert failures and all("scanIncBlock: barriers 4, required at most 3" in failure for failure in failures)
            assert re.search(r"test cases:\s+\d+ \|\s+\d+ passed \|\s+2 failed", ran.stdout), ran.stdout[-4000:]
            continue
        assert ran.returncode == 0, f"pbb_test_{name} of the {year} shape:\n{ran.stdout[-4000:]}{ran.stderr[-2000:]}"
        says_not_applicable = applicability.PREFIX in ran.stdout
        runs_unmet_cases = {"sgm_scan": True, "scan_multi": "host_block_1024" in expected_unmet}.get(name, False)
        assert says_not_applicable == runs_unmet_cases, ran.stdout[-4000:]


def test_the_courses_lockstep_warp_scans_pass_with_the_warning_where_the_task_warns(tmp_path):
    """pmph-w2's tasks warn of the lockstep idiom: its warp scan and the given segmented warp scan,
    written as the course writes them (no __syncwarp), pass on the CPU backend with the warning,
    the lanes kept in step at each application. Under "fail" the warp scan fails with the race."""
    solution = tmp_path / "solution"
    write_fixture(2020, solution, warp_steps="lockstep")
    build = tmp_path / "build"
    configure(solution, "pmph-w2", build)
    executables = ("scan_warp", "sgm_scan")
    output = build_targets(build, [f"pmph-w2_test_{name}" for name in executables])

    for name in executables:
        ran = run_test(build, "pmph-w2", name)
        assert ran.returncode == 0, f"{name}:\n{output[-2000:]}{ran.stdout[-4000:]}{ran.stderr[-2000:]}"
        assert ": warning: warp-synchronous race in kernel " in ran.stderr, ran.stderr[-2000:]
    failed = run_test(build, "pmph-w2", "scan_warp", KERNELLAB_WARP_SYNCHRONOUS="fail")
    assert failed.returncode == 1 and "warp-synchronous race in kernel scanIncWarpKernel" in failed.stdout, (
        failed.stdout[-4000:])


def test_a_grade_whose_every_task_builds_alone_still_reads_the_probes_of_the_whole_submission(tmp_path):
    """Seen on the 2024 and 2025 handouts: with every task built in its own folder, the grade's
    own build folder was never configured, no probe was found, and the given reduce and scan
    failed their launches of 1024 threads (24 words each) instead of being not applicable."""
    solution = tmp_path / "solution"
    write_fixture(2024, solution)
    assignment = load_assignment(REAL_ROOT, "pmph-w2")
    unconfigured = tmp_path / "build"
    arguments = (*Backend.CPU.cmake_args, *student_role_args(Backend.CPU))
    unmet = unmet_conditions(assignment, solution, unconfigured, arguments, sandbox=None)
    assert {condition.probe for condition in unmet} == {"lifted_mssp", "host_block_1024"}


def test_a_host_wrapper_probe_made_to_fail_alone_is_overruled_by_the_tests_that_ran_its_cases(tmp_path):
    """Issue 25: the reference with a header that fails only the host_block_1024 probe's
    translation unit (it names KERNELLAB_PROBE_BLOCK), and a scanInc that leaves the last element
    unwritten in blocks of 1024 threads. The probe alone marked every scanInc case of 1024 threads
    "not applicable" and hid the bug; the tests, built from the same code (its own withChunk),
    ran those cases, so the judge no longer believes the probe and judges them."""
    pbb = load_assignment(REAL_ROOT, "pbb")
    solution = tmp_path / "solution"
    shutil.copytree(pbb.reference_dir, solution)
    host = solution / "hostSkel.cu.h"
    launch = "scan3rdKernel<OP, CHUNK><<<num_blocks, B, shmem_size>>>(d_out, d_in, d_tmp, N, num_seq_chunks);"
    source = host.read_text()
    assert source.count(launch) == 1
    host.write_text("#if KERNELLAB_PROBE_BLOCK == 1024\n#error \"not in the probe\"\n#endif\n"
                    + source.replace(launch, launch.replace("d_tmp, N,", "d_tmp, N - (B == 1024),")))
    build = tmp_path / "build"
    configure(solution, "pbb", build, *student_role_args(Backend.CPU))
    output = build_targets(build, ["pbb_test_scan_multi", *applicability.probe_targets(build, "pbb")])
    unmet = applicability.in_builds(applicability.unmet(build, "pbb", output), {})  # built whole
    assert {condition.probe for condition in unmet} == {"host_block_1024"}, output[-4000:]

    records_path = tmp_path / "scan_multi.rec"
    # As the grader runs it: the student build's records come through the grader's socket.
    ran = runner.run_program([str(build / "assignments" / "pbb" / "pbb_test_scan_multi"),
                              "scanInc scans arrays of any size with any block size*"],
                             tmp_path, 1200, environment=RUN_ENVIRONMENT, records_to=records_path)
    assert ran.exit_code == 0, ran.output[-4000:]
    records = read_records(records_path).records
    assert applicability.believed(unmet, "scan_multi", records) == ()
    # What the judge then sees: for each case, the same input scanned in blocks of 64 and of 1024
    # threads (the seed is the size's), and with an exact operator the results differ.
    scans = {(record.test, record.case): record.payload for record in records if record.role == "device"}
    in_1024 = {key: payload for key, payload in scans.items()
               if "block := 1024" in key[1] and not key[0].endswith("Add<float>")}
    assert in_1024
    for (test, case), payload in in_1024.items():
        assert payload != scans[(test, case.replace("block := 1024", "block := 64"))], (test, case)
    # Where the tests' build took withChunk from elsewhere, their records overrule nothing.
    borrowed = applicability.in_builds(applicability.unmet(build, "pbb", output), {"scan_multi": ("withChunk",)})
    assert applicability.believed(borrowed, "scan_multi", records) == borrowed
