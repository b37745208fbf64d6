"""Grade a class on a Slurm cluster: `kernellab batch DIR --out OUT --slurm`.

The submitting command plans the work (OUT/slurm/plan-<time>.json: the students without a final
grade, in slices) and writes two batch scripts, then submits one job array, a task per slice,
and a job that runs once every task has ended (afterany) to collect the gradebook and the class
summary. Each array task runs `kernellab batch ... --slurm-task PLAN`: it grades its slice into
OUT/students/<name>/ (every student's reports written atomically, grade.json last) with a work
folder of its own, so that tasks never share a reference build. The hidden cases' seed is in
OUT/batch.json, written before the submission: every task grades the same hidden cases, and the
seed is on no command line that `squeue` shows. Running the same command again resumes: it plans
only the students without a final grade (and a task that Slurm requeues skips those its earlier
run finished). `--slurm-collect` collects by hand.

OUT, DIR, the repository and the Python environment must be on a file system the compute nodes
share with the submitting host (the usual home or project file system).
"""

import argparse
import json
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kernellab import PACKAGE_PARENT
from kernellab.errors import InputError, display_path

SLURM_FOLDER = "slurm"
ARRAY_SCRIPT = "grade.sbatch"
COLLECT_SCRIPT = "collect.sbatch"
DEFAULT_STUDENTS_PER_TASK = 10
DEFAULT_TIME_LIMIT = "1:00:00"
DEFAULT_CPUS = 8


def add_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Slurm (grading on a cluster; docs/instructors.md)")
    group.add_argument("--slurm", action="store_true",
                       help="submit a job array (a task per slice of students) and a job after it that writes "
                       "the gradebook and the class summary; run it again to resume")
    group.add_argument("--slurm-collect", action="store_true",
                       help="write the gradebook and the class summary from the grades in OUT (what the job "
                       "after the array runs)")
    group.add_argument("--slurm-task", type=Path, metavar="PLAN", help=argparse.SUPPRESS)
    group.add_argument("--slurm-partition", metavar="NAME", help="the partition (default: the cluster's)")
    group.add_argument("--slurm-account", metavar="NAME", help="the account to charge (default: yours)")
    group.add_argument("--slurm-gpus", type=int, metavar="N",
                       help="GPUs per array task (default: 1, and 0 with --backend cpu)")
    group.add_argument("--slurm-cpus", type=int, default=DEFAULT_CPUS, metavar="N",
                       help=f"CPU cores per array task (default: {DEFAULT_CPUS})")
    group.add_argument("--slurm-mem", metavar="SIZE", help="memory per array task, e.g. 32G (default: the cluster's)")
    group.add_argument("--slurm-time", default=DEFAULT_TIME_LIMIT, metavar="LIMIT",
                       help=f"time limit per array task and for the collecting job (default: {DEFAULT_TIME_LIMIT}); "
                       "a task stopped by it keeps the grades it finished, and a rerun grades the rest")
    group.add_argument("--slurm-students-per-task", type=int, default=DEFAULT_STUDENTS_PER_TASK, metavar="K",
                       help=f"students graded by one array task (default: {DEFAULT_STUDENTS_PER_TASK})")
    group.add_argument("--slurm-max-running", type=int, metavar="M", help="array tasks running at once (default: no limit)")
    group.add_argument("--slurm-sbatch-arg", dest="slurm_sbatch_args", action="append", default=[], metavar="ARG",
                       help="another sbatch option for both jobs, e.g. --slurm-sbatch-arg=--qos=short (repeatable)")


def run(args: argparse.Namespace, submissions: dict[str, Path], out: Path) -> int:
    """The Slurm modes of `kernellab batch`: submit, grade one array task's slice, or collect."""
    if sum(map(bool, (args.slurm, args.slurm_task, args.slurm_collect))) > 1:
        raise InputError("--slurm, --slurm-task and --slurm-collect exclude each other")
    if args.slurm_task:
        return grade_task(args, submissions, out)
    if args.slurm_collect:
        return collect(args, submissions, out)
    return submit(args, submissions, out)


def slices(students: list[str], per_task: int) -> list[list[str]]:
    """The students in order, `per_task` to a slice (the last may hold fewer)."""
    return [students[first:first + per_task] for first in range(0, len(students), per_task)]


def submit(args: argparse.Namespace, submissions: dict[str, Path], out: Path) -> int:
    from kernellab.batch import finished
    from kernellab.options import BATCH_FILE
    from kernellab.solution import choose_assignment

    if args.slurm_students_per_task < 1:
        raise InputError(f"--slurm-students-per-task {args.slurm_students_per_task}: expected at least 1")
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        raise InputError("--slurm: no sbatch on PATH; run this on a host that submits Slurm jobs (a login node)")
    assignment = choose_assignment(args.root, args.assignment, None)
    gpus = args.slurm_gpus if args.slurm_gpus is not None else 0 if args.backend == "cpu" else 1
    backend = args.backend if args.backend != "auto" else "cuda" if gpus else "cpu"
    if backend == "cuda" and not gpus:
        raise InputError("--backend cuda with --slurm-gpus 0: the array tasks would have no GPU")
    seed = args.seed if args.seed is not None else secrets.randbits(62) + 1
    _write(out / BATCH_FILE, json.dumps({"assignment": assignment.id, "backend": backend, "seed": seed}, indent=2) + "\n")
    pending = [name for name in submissions if args.regrade or finished(out, name) is None]
    if not pending:
        print(f"{assignment.id}: all {len(submissions)} submissions have a grade already: collecting here")
        return collect(args, submissions, out)
    folder = out / SLURM_FOLDER
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    descriptor, plan_name = tempfile.mkstemp(prefix=f"plan-{time.strftime('%Y%m%d-%H%M%S')}-", suffix=".json", dir=folder)
    os.close(descriptor)
    plan = Path(plan_name)
    parts = slices(pending, args.slurm_students_per_task)
    _write(plan, json.dumps({"assignment": assignment.id, "slices": parts}, indent=2) + "\n")
    task_command = [*_kernellab_command(args, assignment.id, out), "--backend", backend, "--jobs", str(args.jobs),
                    "--slurm-task", str(plan), *_grading_flags(args)]
    throttle = f"%{args.slurm_max_running}" if args.slurm_max_running else ""
    array_options = [f"--array=0-{len(parts) - 1}{throttle}", f"--time={args.slurm_time}",
                     f"--cpus-per-task={args.slurm_cpus}", *([f"--gres=gpu:{gpus}"] if gpus else []),
                     *([f"--mem={args.slurm_mem}"] if args.slurm_mem else []),
                     f"--output={folder / 'logs' / 'grade-%A_%a.log'}"]
    collect_command = [*_kernellab_command(args, assignment.id, out), "--slurm-collect", *_gradebook_flags(args)]
    collect_options = [f"--time={args.slurm_time}", "--cpus-per-task=1", f"--output={folder / 'logs' / 'collect-%j.log'}"]
    _write(folder / ARRAY_SCRIPT, batch_script(f"kernellab-{assignment.id}", args, array_options, task_command))
    _write(folder / COLLECT_SCRIPT, batch_script(f"kernellab-{assignment.id}-collect", args, collect_options, collect_command))
    array_job = _sbatch([sbatch, "--parsable", str(folder / ARRAY_SCRIPT)])
    collect_job = _sbatch([sbatch, "--parsable", f"--dependency=afterany:{array_job}", str(folder / COLLECT_SCRIPT)])
    print(f"{assignment.id}: {len(submissions)} submissions, {len(submissions) - len(pending)} already graded; "
          f"job array {array_job} grades {len(pending)} in {len(parts)} tasks on the {backend} backend "
          f"({gpus} GPU(s) and {args.slurm_cpus} cores each), job {collect_job} then writes the gradebook.")
    print(f"scripts and logs: {display_path(folder)}; follow with `squeue -j {array_job},{collect_job}`; "
          "once they have ended, the same command grades whatever is left")
    return 0


def batch_script(name: str, args: argparse.Namespace, options: list[str], command: list[str]) -> str:
    """A batch script: its sbatch options as #SBATCH lines, then the one command it runs."""
    common = [f"--job-name={name}", *([f"--partition={args.slurm_partition}"] if args.slurm_partition else []),
              *([f"--account={args.slurm_account}"] if args.slurm_account else []), *args.slurm_sbatch_args]
    lines = ["#!/bin/bash", *(f"#SBATCH {option}" for option in (*common, *options)), "set -euo pipefail",
             f"export PYTHONPATH={shlex.quote(str(PACKAGE_PARENT))}${{PYTHONPATH:+:$PYTHONPATH}}",
             "exec " + shlex.join(command)]
    return "\n".join(lines) + "\n"


def _kernellab_command(args: argparse.Namespace, assignment_id: str, out: Path) -> list[str]:
    return [sys.executable, "-m", "kernellab", "--root", str(args.root), "batch", str(args.submissions.resolve()),
            "--out", str(out), "--assignment", assignment_id]


def _grading_flags(args: argparse.Namespace) -> list[str]:
    return [*(["--work", str(args.work.resolve())] if args.work else []), *(["--unsandboxed"] if args.unsandboxed else []),
            *(["--regrade"] if args.regrade else []), *(f"--cmake-arg={arg}" for arg in args.cmake_args)]


def _gradebook_flags(args: argparse.Namespace) -> list[str]:
    return ["--gradebook", args.lms, *(["--roster", str(args.roster.resolve()), "--roster-key", args.roster_key] if args.roster else [])]


def _sbatch(command: list[str]) -> str:
    """Submit; the job id sbatch --parsable prints (without a cluster name)."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise InputError(f"sbatch refused the job: {(done.stderr or done.stdout).strip()}")
    return done.stdout.strip().split(";")[0]


def _write(path: Path, text: str) -> None:
    from kernellab.reports import write_atomically

    write_atomically(path, text)


def grade_task(args: argparse.Namespace, submissions: dict[str, Path], out: Path) -> int:
    """One array task: grade its slice of the plan, with a work folder of its own."""
    from kernellab import batch
    from kernellab.grading.start import open_run

    task = os.environ.get("SLURM_ARRAY_TASK_ID")
    if task is None or not task.isdigit():
        raise InputError("--slurm-task runs inside a Slurm array task: SLURM_ARRAY_TASK_ID is not set")
    plan = json.loads(args.slurm_task.read_text())
    if int(task) >= len(plan["slices"]):
        raise InputError(f"array task {task}: the plan {args.slurm_task} has only {len(plan['slices'])} slices")
    mine = {name: submissions[name] for name in plan["slices"][int(task)] if name in submissions}
    args.work = (args.work or args.root / "build" / "grader") / f"slurm-task-{task}"
    grading = open_run(args.root, args.assignment, args.backend, args.seed, args.work, args.unsandboxed, args.cmake_args,
                       sandbox_kind=args.sandbox, deadline_s=args.deadline)
    return _exit_code(batch.grade_folder(grading, mine, out, args.jobs, args.regrade))


def collect(args: argparse.Namespace, submissions: dict[str, Path], out: Path) -> int:
    from kernellab import batch, gradebook
    from kernellab.solution import choose_assignment

    assignment = choose_assignment(args.root, args.assignment, None)
    class_files = batch.ClassFiles(args.submissions.resolve(), gradebook.options(args))
    return _exit_code(batch.collect(assignment, submissions, out, class_files))


def _exit_code(grades: dict) -> int:
    """0 when every student has a final grade, else `batch`'s "not graded" code."""
    from kernellab.batch import all_final
    from kernellab.options import NOT_GRADED_EXIT_CODE

    return 0 if all_final(grades) else NOT_GRADED_EXIT_CODE
