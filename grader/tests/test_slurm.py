"""`kernellab batch --slurm` against a real single-node Slurm (slurm_cluster.py) on the CPU backend:
a job array grades a small class of the scaffolded starter assignment (the reference, a
known-wrong version, and an archive that intake refuses), a dependent job writes the gradebooks
and the class summary, and a rerun after a lost grade grades only that student."""

import csv
import json
import random
import shutil

import pytest

from helpers import REAL_ROOT, copy_build_system
from kernellab.cli import build_parser, main
from kernellab.known_wrong import find_wrong_versions
from kernellab.manifest import load_assignment
from kernellab.patches import apply_patch, parse_patch
from kernellab.sandbox.bubblewrap import machine_sandbox
from kernellab.sandbox.step import SandboxUnavailable
from kernellab.scaffold import scaffold
from kernellab.slurm import batch_script, slices
from slurm_cluster import PARTITION, LocalSlurm, unavailable

needs_cluster = pytest.mark.skipif(bool(unavailable()), reason=f"no Slurm test cluster: {unavailable()}")

# A generous bound for the array on a shared 2-core machine (three CPU-backend builds).
CLASS_TIMEOUT_S = 1800


def sandbox_option() -> list[str]:
    """The sandbox where this machine has one; the subject here is Slurm, not the sandbox."""
    try:
        machine_sandbox()
    except SandboxUnavailable:
        return ["--unsandboxed"]
    return []


def rows_of(path) -> dict[str, dict[str, str]]:
    return {row["student"]: row for row in csv.DictReader(path.open())}


def test_slices_hold_every_student_once_in_order():
    chooser = random.Random(31)
    for _ in range(50):
        students = [f"s{index:03d}" for index in range(chooser.randint(1, 120))]
        per_task = chooser.randint(1, 13)
        parts = slices(students, per_task)
        assert [name for part in parts for name in part] == students, (len(students), per_task)
        assert all(len(part) == per_task for part in parts[:-1]) and 1 <= len(parts[-1]) <= per_task, (len(students), per_task)


def test_the_batch_script_carries_the_options_and_quotes_the_command(tmp_path):
    args = build_parser().parse_args(["batch", "subs", "--out", "out", "--slurm", "--slurm-partition", "gpu-h100",
                                      "--slurm-account", "course42", "--slurm-sbatch-arg=--qos=short"])
    script = batch_script("kernellab-pbb", args, ["--array=0-29%4", "--gres=gpu:1"],
                          ["python3", "-m", "kernellab", "batch", str(tmp_path / "a folder; rm -rf ~")])
    lines = script.splitlines()
    assert lines[0] == "#!/bin/bash"
    assert [line for line in lines if line.startswith("#SBATCH")] == [
        "#SBATCH --job-name=kernellab-pbb", "#SBATCH --partition=gpu-h100", "#SBATCH --account=course42",
        "#SBATCH --qos=short", "#SBATCH --array=0-29%4", "#SBATCH --gres=gpu:1"]
    assert lines[-1] == f"exec python3 -m kernellab batch '{tmp_path}/a folder; rm -rf ~'"


def test_without_sbatch_the_slurm_option_says_where_to_run_it(tmp_path, monkeypatch, capsys):
    (tmp_path / "submissions" / "ada").mkdir(parents=True)
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch here
    code = main(["--root", str(REAL_ROOT), "batch", str(tmp_path / "submissions"), "--assignment", "pbb",
                 "--out", str(tmp_path / "out"), "--slurm"])
    assert code == 2 and "no sbatch on PATH" in capsys.readouterr().err


@pytest.mark.slow
@needs_cluster
def test_a_job_array_grades_the_class_and_a_dependent_job_writes_the_gradebook_and_summary(tmp_path, monkeypatch):
    root = copy_build_system(tmp_path / "repo")
    scaffold(root, "demo", None)
    assignment = load_assignment(root, "demo")
    submissions = tmp_path / "submissions"
    shutil.copytree(assignment.reference_dir, submissions / "reference")
    task, patch_file = find_wrong_versions(assignment, None)[0]
    wrong = f"{task.id}--{patch_file.stem}"
    shutil.copytree(assignment.reference_dir, submissions / wrong)
    apply_patch(parse_patch(patch_file), submissions / wrong)
    # Refused at intake, so graded without a build: the second array task costs seconds, and so
    # does grading it again on the rerun below.
    (submissions / "zz-broken.zip").write_bytes(b"this is not a zip file")
    (submissions / "notes.txt").write_text("a TA's note, not a submission\n")
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,submission\n"
                      + "".join(f"Student {index},{1000 + index},s{index},login{index},A,{name}\n"
                                for index, name in enumerate(["reference", wrong, "zz-broken", "absent"])))
    out = tmp_path / "out"
    command = ["--root", str(root), "batch", str(submissions), "--assignment", "demo", "--backend", "cpu",
               "--out", str(out), "--work", str(tmp_path / "work"), "--cmake-arg=-DKERNELLAB_CPU_NVCC_CHECK=OFF",
               *sandbox_option(), "--gradebook", "canvas", "--roster", str(roster),
               "--slurm", "--slurm-partition", PARTITION, "--slurm-students-per-task", "2", "--slurm-cpus", "1",
               "--slurm-time", "40:00"]
    with LocalSlurm(tmp_path / "cluster") as cluster:
        monkeypatch.setenv("SLURM_CONF", str(cluster.conf))

        def logs() -> str:
            return "\n".join(f"--- {path.name}\n{path.read_text()[-4000:]}" for path in sorted((out / "slurm" / "logs").glob("*.log")))

        assert main(command) == 0
        cluster.wait_idle(CLASS_TIMEOUT_S)
        plans = sorted((out / "slurm").glob("plan-*.json"))
        assert len(plans) == 1
        assert json.loads(plans[0].read_text())["slices"] == [["reference", wrong], ["zz-broken"]]
        assert len(list((out / "slurm" / "logs").glob("grade-*_*.log"))) == 2, logs()
        assert (out / "grades.csv").is_file(), logs()

        rows = rows_of(out / "grades.csv")
        assert set(rows) == {"reference", wrong, "zz-broken", "notes.txt", "absent"}, logs()
        assert rows["reference"]["status"] == "graded" and float(rows["reference"]["score"]) == 100, (rows["reference"], logs())
        assert rows[wrong]["status"] == "graded" and float(rows[wrong]["score"]) == 0, (rows[wrong], logs())
        assert rows["zz-broken"]["status"] == "rejected" and "cannot be read as an archive" in rows["zz-broken"]["message"]
        assert rows["notes.txt"]["status"] == "not a submission" and "not an archive" in rows["notes.txt"]["message"]
        assert rows["absent"]["status"] == "no submission" and rows["absent"]["score"] == ""

        canvas = list(csv.reader((out / "grades-canvas.csv").open()))
        assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "demo: saxpy"]
        assert canvas[1] == ["Points Possible", "", "", "", "", "100"]
        by_id = {line[1]: line for line in canvas[2:]}
        assert by_id["1000"] == ["Student 0", "1000", "s0", "login0", "A", "100"]
        assert by_id["1001"][-1] == by_id["1002"][-1] == "0" and by_id["1003"][-1] == ""  # absent: Canvas keeps its own

        summary = (out / "summary.md").read_text()
        assert "| 90-100 | 1 |" in summary and "| 0-10 | 2 |" in summary, summary
        assert "| saxpy | public | 1 | 2 | 50% |" in summary and "| saxpy | hidden | 1 | 2 | 50% |" in summary, summary
        assert "2 graded, 1 rejected, 1 not a submission" in summary, summary
        assert "| saxpy | public: FAILED: " in summary, summary
        if "copydetect is not installed" not in summary:
            # A known-wrong version is the reference with one line changed: they share most of their code.
            assert "2 submissions compared pairwise; pairs sharing 50% or more of either's code beyond the skeleton: 1." in summary
        assert "<h2>Pass rates</h2>" in (out / "summary.html").read_text()

        # A lost grade (a node that died mid-write, say): the same command grades that student alone.
        before = (out / "grades.csv").read_text()
        shutil.rmtree(out / "students" / "zz-broken")
        assert main(command) == 0
        cluster.wait_idle(CLASS_TIMEOUT_S)
        newest = max((out / "slurm").glob("plan-*.json"), key=lambda path: path.stat().st_mtime_ns)
        assert json.loads(newest.read_text())["slices"] == [["zz-broken"]]
        assert (out / "grades.csv").read_text() == before, logs()
