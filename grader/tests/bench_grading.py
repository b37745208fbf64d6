"""The grading benchmark (docs/performance.md): a batch of submissions of pbb, then one submission
graded several times, on the GPU. A benchmark, not a test: it prints times and scores.

    python3 grader/tests/bench_grading.py [--submissions 20] [--regrades 5] [--jobs 3] --work DIR
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from grading_fixtures import make_submissions  # noqa: E402
from kernellab.cli import main  # noqa: E402
from kernellab.manifest import load_assignment  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def grade_json(path: Path) -> dict:
    return json.loads(path.read_text())


def bench_batch(work: Path, submissions: int, jobs: int) -> None:
    folder = work / "submissions"
    # The reference, the skeleton, the renamed zip and known-wrong versions: `submissions` in all.
    make_submissions(load_assignment(ROOT, "pbb"), folder, submissions - 3)
    started = time.monotonic()
    code = main(["--root", str(ROOT), "batch", str(folder), "--assignment", "pbb", "--out", str(work / "batch"),
                 "--jobs", str(jobs), "--work", str(work / "grader")])
    elapsed = time.monotonic() - started
    grades = [grade_json(path) for path in sorted((work / "batch" / "students").glob("*/grade.json"))]
    print(f"\nbatch: {len(grades)} submissions, --jobs {jobs}, exit code {code}, {elapsed:.0f} s in all "
          "(the reference's build and runs included)")
    for stage in ("build", "tests", "sanitizers", "speed"):
        values = [grade["stages"].get(stage, 0.0) for grade in grades if grade["stages"]]
        print(f"  {stage}: median {statistics.median(values):.1f} s, max {max(values):.1f} s per submission")


def bench_regrades(work: Path, regrades: int) -> None:
    points = []
    for attempt in range(regrades):
        out = work / f"regrade-{attempt}"
        started = time.monotonic()
        main(["--root", str(ROOT), "grade", str(ROOT / "reference" / "pbb"), "--assignment", "pbb",
              "--out", str(out), "--work", str(work / "grader")])
        grade = grade_json(out / "grade.json")
        speed = {f"{result['case']}@{result['size']}": (result["points"], round(result["student_us"] / result["reference_us"], 3))
                 for task in grade["tasks"] for result in task["speed"]}
        points.append(sum(value for value, _ratio in speed.values()))
        print(f"\ngrade {attempt + 1}: {time.monotonic() - started:.1f} s ({grade['stages']}), score {grade['score']}, "
              f"speed points {points[-1]} (case: points, time over the reference's): {speed}")
    speed_max = sum(case.points for case in load_assignment(ROOT, "pbb").speed)
    spread = max(points) - min(points)
    print(f"\nspeed points over {regrades} grades: {points}; spread {spread} of {speed_max} ({100 * spread / speed_max:.1f}%)")


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=20)
    parser.add_argument("--regrades", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--work", type=Path, required=True)
    args = parser.parse_args()
    if args.regrades:
        bench_regrades(args.work, args.regrades)
    if args.submissions:
        bench_batch(args.work, args.submissions, args.jobs)


if __name__ == "__main__":
    main_bench()
