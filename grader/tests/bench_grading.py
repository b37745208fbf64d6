"""The grading benchmark (docs/performance.md): a batch of submissions of pbb, then one submission
graded several times, on the GPU. A benchmark, not a test: it prints times and scores.

    python3 grader/tests/bench_grading.py [--submissions 20] [--regrades 5] [--jobs 3] [--assignment pbb]
        [--cut SECONDS] --work DIR

Each measure gives wall seconds, CPU-seconds (the grader and every process it waited for) and
GPU-busy seconds (nvidia-smi's utilization sampled every 200 ms).
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from grading_fixtures import make_submissions  # noqa: E402
from kernellab.cli import main  # noqa: E402
from kernellab.manifest import load_assignment  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class Usage:
    """What a block cost: wall seconds, CPU-seconds of this process and every process it waited
    for (the builds and runs), and GPU-busy seconds: nvidia-smi's utilization, the share of each
    200 ms sample in which a kernel ran, summed over the samples (0 without nvidia-smi)."""

    wall_s = cpu_s = gpu_busy_s = 0.0

    def __str__(self) -> str:
        return f"{self.wall_s:.1f} s wall, {self.cpu_s:.0f} CPU-s, {self.gpu_busy_s:.1f} GPU-busy s"


@contextmanager
def measured():
    usage = Usage()
    sampler = None
    if shutil.which("nvidia-smi"):
        sampler = subprocess.Popen(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                                    "-lms", "200", "-i", "0"], stdout=subprocess.PIPE, text=True)
    before, started = os.times(), time.monotonic()
    try:
        yield usage
    finally:
        after = os.times()
        usage.wall_s = time.monotonic() - started
        usage.cpu_s = sum(getattr(after, field) - getattr(before, field)
                          for field in ("user", "system", "children_user", "children_system"))
        if sampler is not None:
            sampler.terminate()
            samples = [int(line) for line in sampler.communicate()[0].split() if line.isdigit()]
            usage.gpu_busy_s = sum(samples) / 100 * 0.2


def grade_json(path: Path) -> dict:
    return json.loads(path.read_text())


def add_perturbed_copies(folder: Path, submissions: int) -> None:
    """Copies of the generated folders, in turn, until `folder` holds `submissions`: each source
    file of a copy gains a declaration of its own, as real students' files differ (a comment would
    not: the compiler cache hashes preprocessed code)."""
    originals = sorted(path for path in folder.iterdir() if path.is_dir())
    for copy in range(max(0, submissions - len(list(folder.iterdir())))):
        original = originals[copy % len(originals)]
        perturbed = folder / f"{original.name}--copy{copy}"
        shutil.copytree(original, perturbed)
        # A name of each file's own (one file of a submission includes another), under a guard of
        # its own: a header included twice in one translation unit must not define it twice.
        for index, source in enumerate(sorted(perturbed.iterdir())):
            if source.suffix in (".h", ".cuh", ".cu"):
                name = f"benchCopy{copy}File{index}"
                source.write_text(source.read_text() + f"\n#ifndef {name.upper()}\n#define {name.upper()}\n"
                                  f"static constexpr int {name} = {copy};\n#endif\n")


def bench_batch(work: Path, assignment: str, submissions: int, jobs: int, cut_s: float | None) -> None:
    folder = work / "submissions"
    # The reference, the skeleton, the renamed zip and known-wrong versions: `submissions` in all.
    expected = make_submissions(load_assignment(ROOT, assignment), folder, submissions - 3)
    add_perturbed_copies(folder, submissions)
    command = [sys.executable, "-m", "kernellab", "--root", str(ROOT), "batch", str(folder), "--assignment", assignment,
               "--out", str(work / "batch"), "--jobs", str(jobs), "--work", str(work / "grader")]
    with measured() as usage:
        started = time.time()
        # The caller's path too: libclang's bindings may be installed only there (.deb/setup.sh).
        python_path = os.pathsep.join(filter(None, [str(ROOT / "grader"), os.environ.get("PYTHONPATH")]))
        batch = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": python_path})
        try:
            code = batch.wait(cut_s)
        except subprocess.TimeoutExpired:  # the batch stops cleanly, keeping every finished grade
            batch.send_signal(signal.SIGINT)
            code = batch.wait()
    finished = sorted(((path.stat().st_mtime - started, grade_json(path))
                       for path in (work / "batch" / "students").glob("*/grade.json")), key=lambda ended: ended[0])
    grades = [grade for _, grade in finished]
    graded = sum(grade["status"] == "graded" for grade in grades)
    print(f"\nbatch of {assignment}: {len(grades)} of {submissions} submissions finished ({graded} graded), --jobs {jobs}, "
          f"exit code {code}: {usage} (the reference's build and runs included); "
          f"{60 * len(grades) / usage.wall_s:.1f} grades a minute")
    for seconds, grade in finished:
        print(f"  {seconds:6.0f} s  {grade['student']}: {grade['status']}, {grade['score']}")
    # Each copy fails what its original fails (grading_fixtures.make_submissions): a task failed
    # is one with points to give that gave none (speed points may keep a passed one below full).
    unexpected = {grade["student"]: f"{grade['student']}: failed {sorted(failed)}, expected {sorted(expected[original])}"
                  for grade in grades
                  for original in [grade["student"].split("--copy")[0]]
                  for failed in [{task["id"] for task in grade["tasks"] if task["max_points"] and not task["points"]}]
                  if grade["status"] != "graded" or failed != expected[original]}
    print(f"verdicts as expected: {len(grades) - len(unexpected)} of {len(grades)}", *unexpected.values(), sep="\n  ")
    # Why, where a grade is not as expected: each short task's feedback and failed groups, so that
    # one measurement on a GPU host tells the cause without its work folder.
    for grade in grades:
        for task in grade["tasks"] if grade["student"] in unexpected else ():
            if task["points"] < task["max_points"]:
                lines = [task["feedback"], *(f"{group['group']}: {group['verdict']}: {group['detail']}"
                                             for group in task["groups"] if group["verdict"] != "passed")]
                print(f"  {grade['student']} {task['id']} {task['points']}/{task['max_points']}:",
                      " / ".join(" ".join(line.split())[:300] for line in lines if line))
    stages = sorted({stage for grade in grades for stage in grade["stages"]})
    for stage in stages:
        values = [grade["stages"].get(stage, 0.0) for grade in grades if grade["stages"]]
        print(f"  {stage}: median {statistics.median(values):.1f} s, max {max(values):.1f} s per submission")


def bench_regrades(work: Path, regrades: int) -> None:
    points = []
    for attempt in range(regrades):
        out = work / f"regrade-{attempt}"
        with measured() as usage:
            main(["--root", str(ROOT), "grade", str(ROOT / "reference" / "pbb"), "--assignment", "pbb",
                  "--out", str(out), "--work", str(work / "grader")])
        grade = grade_json(out / "grade.json")
        speed = {f"{result['case']}@{result['size']}": (result["points"], round(result["student_us"] / result["reference_us"], 3))
                 for task in grade["tasks"] for result in task["speed"]}
        points.append(sum(value for value, _ratio in speed.values()))
        print(f"\ngrade {attempt + 1}: {usage} ({grade['stages']}), score {grade['score']}, "
              f"speed points {points[-1]} (case: points, time over the reference's): {speed}")
    speed_max = sum(case.points for case in load_assignment(ROOT, "pbb").speed)
    spread = max(points) - min(points)
    print(f"\nspeed points over {regrades} grades: {points}; spread {spread} of {speed_max} ({100 * spread / speed_max:.1f}%)")


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=20)
    parser.add_argument("--regrades", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--assignment", default="pbb", help="the batch's assignment (default pbb)")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--cut", type=float, metavar="SECONDS",
                        help="stop the batch (SIGINT) after this long and report the grades that finished")
    args = parser.parse_args()
    if args.regrades:
        bench_regrades(args.work, args.regrades)
    if args.submissions:
        bench_batch(args.work, args.assignment, args.submissions, args.jobs, args.cut)


if __name__ == "__main__":
    main_bench()
