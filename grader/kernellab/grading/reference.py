"""The reference's build and records, made once per grading run beside the first submission's
build: each student group is judged against the records of the same group's reference run."""

import hashlib
import json
import os
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kernellab import cmake, compile_cache, runner
from kernellab.cpus import available_cpus
from kernellab.errors import InputError
from kernellab.grading.building import BUILD_TIMEOUT_S, REFERENCE_ROLE, build, cache_environment, student_role_args
from kernellab.grading.model import GradingError
from kernellab.grading.resources import PARALLEL_RUNS
from kernellab.grading.run import GradingRun
from kernellab.grading.targets import executable, test_targets, tested
from kernellab.judge import judge, own_results
from kernellab.records import read_records
from kernellab.verdict import NO_GPU_EXIT_CODE


def prepare(grading: GradingRun) -> None:
    """Build the reference and record its results, once per grading run (later calls wait for it)."""
    with grading.reference.lock:
        if not grading.reference.recorded:
            _build_and_record(grading)
            grading.reference.recorded = True


def expected_records(grading: GradingRun, tests: str, group: str) -> Path:
    """The reference's records for one test executable and group."""
    prepare(grading)
    return grading.reference_records / f"{tests}.{group}.rec"


def prebuilt_mains(grading: GradingRun) -> tuple[Path, ...]:
    """The harness mains the reference build compiled, if it has ended by now: a submission
    graded alone does not wait for it (its own build runs beside the reference's), the
    others of a batch link them instead of compiling them again."""
    if not grading.reference.built.is_set():
        return ()
    objects = grading.reference_build / "grader" / "harness" / "CMakeFiles"
    return tuple(sorted(objects.glob("kernellab_*_main.dir/src/catch_main.cpp.o")))


def warm_harness(grading: GradingRun) -> None:
    """Compile the harness's own objects (Catch2's main of the GPU tests; the CPU runtime, or the
    GPU's host-traffic wrappers) once per grading run, with a student build's flags, into the
    compile cache, before any student build starts: every build folder of every submission (one
    per isolated task) then takes them from the cache, which student builds cannot write
    (compile_cache.py). A
    trusted build: the grader's code alone, the reference's folder only configured. Its failure
    leaves each student build to compile its own, as without a cache."""
    cache = grading.compile_cache
    with grading.reference.harness_lock:
        if cache is None or grading.reference.harness_warmed:
            return
        grading.reference.harness_warmed = True
        assignment = grading.assignment
        folder = grading.work / f"harness-{assignment.id}-{grading.backend}"
        log_dir = folder / "logs"
        try:
            cmake.configure(assignment.root, folder, assignment.id, assignment.reference_dir, log_dir / "configure.log",
                            (*grading.cmake_args, *student_role_args(grading.backend), *compile_cache.configure_args(cache)))
        except InputError:
            return  # the reference's own build reports what does not configure
        # What a grading build links: every task's tests are GPU tests (the host main is for the
        # assignments' own host programs, which no grade builds).
        objects = ["kernellab_gpu_main", "kernellab_host_traffic" if grading.backend.on_gpu else "kernellab_cpu_runtime"]
        outcome = runner.run_program(["cmake", "--build", str(folder), "-j", str(available_cpus()), "--target", *objects],
                                     folder, BUILD_TIMEOUT_S, environment=cache_environment(cache, folder, writes=True))
        (log_dir / "build.log").write_text(outcome.output, encoding="utf-8")


def kept_public_records(grading: GradingRun, program: Path) -> Path:
    """Where the reference's public records are kept between grading runs: public cases do
    not depend on the run's seed, so the same executable on the same device records the same
    results (a later grade of one submission then runs only the hidden cases)."""
    identity = hashlib.sha256(program.read_bytes())
    identity.update(json.dumps([grading.backend, grading.environment.get("gpu"), grading.environment.get("driver")]).encode())
    return grading.work / "reference-public-records" / f"{program.name}.{identity.hexdigest()[:32]}.rec"


def _build_and_record(grading: GradingRun) -> None:
    assignment = grading.assignment
    try:
        built = build(assignment, assignment.reference_dir, grading.reference_build, test_targets(assignment, grading.times_speed),
                      (*grading.cmake_args, REFERENCE_ROLE), sandbox=None,
                      cache=grading.reference_compile_cache)
    finally:
        grading.reference.built.set()
    broken = {target: errors for target, errors in built.items() if errors is not None}
    if broken:
        target, errors = next(iter(broken.items()))
        raise GradingError(f"the reference does not build ({target}):\n{errors}")
    record_all(grading, grading.reference_build)


def record_all(grading: GradingRun, build_dir: Path) -> None:
    """The reference's records of every test executable and group, each checked against
    itself. A run that fails out of time or out of GPU memory beside other runs (students'
    runs in a batch) runs again alone (on a GPU, with the GPU to itself), and only that run
    decides, as for a student's groups (groups.confirm_alone)."""
    records_dir = grading.reference_records
    shutil.rmtree(records_dir, ignore_errors=True)
    records_dir.mkdir(parents=True)
    # Public groups first: they are the larger ones, so the longest runs start at once.
    jobs = [(tests, group) for group in grading.active_groups() for tests in tested(grading.assignment)]

    def record_one(job: tuple[str, str], alone: bool = False) -> tuple[str, str] | None:
        """Record and check one group; the job back, when its run must be repeated alone."""
        tests, group = job
        record = records_dir / f"{tests}.{group}.rec"
        program = executable(build_dir, grading.assignment.id, tests)
        kept = kept_public_records(grading, program) if group == "public" else None
        # A run repeated alone starts a fresh file: the judge takes a second record of a check for a forgery.
        record.unlink(missing_ok=True)
        if kept is not None and kept.exists():
            os.link(kept, record)
            return None
        with grading.run_slot():
            outcome = runner.run_program(
                grading.group_command(program, tests, group),
                cwd=records_dir,
                timeout_s=grading.timeout_s,
                environment={
                    **grading.group_environment(group),
                    "KERNELLAB_RECORD": str(record),
                    **grading.backend.reference_environment,
                },
            )
        if outcome.exit_code == NO_GPU_EXIT_CODE:
            return None  # no records: every student group of this executable is "not run: no GPU"
        if not alone and outcome.may_owe_to_neighbours():
            return job
        recorded = read_records(record)
        results = judge(recorded.records, own_results(recorded.records))
        failures = [result for result in results if not result.passed]
        if outcome.exit_code != 0 or recorded.problem or not results or failures:
            if outcome.timed_out or outcome.signal_name:  # its records say less than how it ended
                reason = outcome.summary()
            else:
                reason = failures[0].message if failures else recorded.problem or outcome.summary()
            raise GradingError(f"the reference fails its own {tests} tests ({group}): {reason}")
        if kept is not None:
            kept.parent.mkdir(exist_ok=True)
            unique = kept.with_suffix(f".{threading.get_ident()}")
            os.link(record, unique)
            unique.replace(kept)
        return None

    with ThreadPoolExecutor(PARALLEL_RUNS) as pool:
        again = [job for job in pool.map(record_one, jobs) if job is not None]
    if again:
        with grading.gpu_alone():
            for job in again:
                record_one(job, alone=True)
