"""`kernellab export`: Gradescope's autograder zip, run as Gradescope runs it (setup.sh, then
run_autograder, in /autograder: here a folder bubblewrap binds there), and the PrairieLearn
question, validated against PrairieLearn's own published schema."""

import json
import os
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import jsonschema
import pytest

from helpers import REAL_ROOT, copy_build_system
from kernellab.cli import main
from kernellab.scaffold import scaffold
from kernellab.manifest import load_assignment

SCHEMAS = Path(__file__).parent / "schemas"
# PrairieLearn's schema of a question's info.json. PrairieLearn is AGPL-licensed, so no copy is
# kept here: it is read from a PrairieLearn checkout ($KERNELLAB_PRAIRIELEARN), or downloaded
# at this commit, or the test is skipped saying so.
PRAIRIELEARN_COMMIT = "88fb8556a7a1768e2082736be9095241b11238d7"
INFO_QUESTION_SCHEMA = "apps/prairielearn/src/schemas/schemas/infoQuestion.json"
PRAIRIELEARN_RAW = f"https://raw.githubusercontent.com/PrairieLearn/PrairieLearn/{PRAIRIELEARN_COMMIT}/"


@pytest.fixture(scope="module")
def starter(tmp_path_factory) -> Path:
    """A repository holding the starter assignment, in a folder other users may enter."""
    root = Path("/tmp") / f"kernellab-export-test-{os.getpid()}"
    shutil.rmtree(root, ignore_errors=True)
    copy_build_system(root)
    scaffold(root, "starter", None)
    for folder in (root, *(path for path in root.rglob("*") if path.is_dir())):
        folder.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_the_gradescope_zip_has_its_scripts_at_the_root_and_is_reproducible(starter, tmp_path):
    assert main(["--root", str(starter), "export", "gradescope", "starter", "--out", str(tmp_path / "a")]) == 0
    assert main(["--root", str(starter), "export", "gradescope", "starter", "--out", str(tmp_path / "b"), "--timeout", "1200"]) == 0
    first, second = tmp_path / "a/kernellab-starter-gradescope.zip", tmp_path / "b/kernellab-starter-gradescope.zip"
    with zipfile.ZipFile(first) as archive:
        modes = {info.filename: info.external_attr >> 16 & 0o777 for info in archive.infolist()}
        run_script = archive.read("run_autograder").decode()
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755, modes
    assert "kernellab/reference/starter/kernels.cuh" in modes and "kernellab/grader/kernellab/cli.py" in modes
    assert "remote-token" not in modes and "--remote" not in run_script
    assert "--deadline 540" in run_script and "--sandbox container" in run_script
    assert "--deadline 1140" in zipfile.ZipFile(second).read("run_autograder").decode()
    assert main(["--root", str(starter), "export", "gradescope", "starter", "--out", str(tmp_path / "c")]) == 0
    assert first.read_bytes() == (tmp_path / "c/kernellab-starter-gradescope.zip").read_bytes()


def test_a_gradescope_zip_for_a_gpu_host_holds_its_token_and_url(starter, tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cr3t-token-7f2a\n")
    assert main(["--root", str(starter), "export", "gradescope", "starter", "--out", str(tmp_path),
                 "--remote", "https://gpu.example.edu:8750", "--token-file", str(token)]) == 0
    with zipfile.ZipFile(tmp_path / "kernellab-starter-gradescope.zip") as archive:
        assert archive.read("remote-token") == b"s3cr3t-token-7f2a\n"
        assert "--remote https://gpu.example.edu:8750 --token-file /autograder/source/remote-token" in archive.read("run_autograder").decode()


def published_schema(relative: str) -> dict:
    checkout = os.environ.get("KERNELLAB_PRAIRIELEARN")
    if checkout:
        return json.loads((Path(checkout) / relative).read_text())
    try:
        with urllib.request.urlopen(PRAIRIELEARN_RAW + relative, timeout=15) as response:
            return json.loads(response.read())
    except OSError as error:
        pytest.skip(f"PrairieLearn's {relative} is not at hand: set KERNELLAB_PRAIRIELEARN to a PrairieLearn checkout ({error})")


def test_the_prairielearn_question_validates_against_prairielearn_s_schema(starter, tmp_path):
    course = tmp_path / "course"
    assert main(["--root", str(starter), "export", "prairielearn", "starter", "--course", str(course),
                 "--image", "course/kernellab-grader", "--timeout", "300"]) == 0
    info = json.loads((course / "questions/starter/info.json").read_text())
    jsonschema.Draft7Validator(published_schema(INFO_QUESTION_SCHEMA), format_checker=jsonschema.FormatChecker()).validate(info)
    assert info["externalGradingOptions"]["timeout"] == 300 and info["externalGradingOptions"]["enableNetworking"] is False
    entrypoint = Path(info["externalGradingOptions"]["entrypoint"].replace("/grade/serverFilesCourse", str(course / "serverFilesCourse")))
    assert entrypoint.is_file() and entrypoint.stat().st_mode & 0o111, entrypoint
    assert (course / "serverFilesCourse/kernellab/reference/starter/kernels.cuh").is_file()
    assert '<pl-file-upload file-names="kernels.cuh"></pl-file-upload>' in (course / "questions/starter/question.html").read_text()
    dockerfile = (course / "graders/kernellab/Dockerfile").read_text()
    assert "FROM ubuntu:24.04" in dockerfile and "pip install --no-cache-dir 'numpy>=1.24'" in dockerfile, dockerfile


def test_the_prairielearn_question_turns_external_grading_on():
    # PrairieLearn's documentation: external grading is disabled where "enabled" is absent.
    from kernellab.export_prairielearn import info_json

    options = info_json(load_assignment(REAL_ROOT, "pbb"), "course/kernellab-grader", 600, False)["externalGradingOptions"]
    assert options["enabled"] is True


def test_prairielearn_upload_lists_every_alias_as_optional_and_requires_only_unaliased_names():
    from kernellab.export_prairielearn import question_html

    page = question_html(load_assignment(REAL_ROOT, "pbb"))
    assert ('<pl-file-upload optional-file-names="pbbKernels.cu.h,hostSkel.cu.h,constants.cu.h,'
            'pbb_kernels.cuh,host_skel.cuh,constants.cuh"></pl-file-upload>') in page


def bwrap_at(folder: Path, target: str, command: list[str], env: dict[str, str], timeout_s: int) -> subprocess.CompletedProcess:
    """`command` with `folder` at `target`, the rest of the system read-only and without the CUDA
    toolkit (as in a platform's container), as root, a fresh /tmp each time (a fresh container)."""
    system = []
    for entry in sorted(Path("/").iterdir()):
        if entry.name in ("proc", "dev", "tmp", target.strip("/")):
            continue
        system += ["--symlink", os.readlink(entry), str(entry)] if entry.is_symlink() else ["--ro-bind", str(entry), str(entry)]
    hidden_cuda = [argument for path in ("/usr/local/cuda", *map(str, Path("/usr/local").glob("cuda-*")))
                   if os.path.isdir(path) and not os.path.islink(path) for argument in ("--tmpfs", path)]
    return subprocess.run(
        ["bwrap", *system, "--bind", str(folder), target, "--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc",
         *hidden_cuda, "--unshare-pid", "--die-with-parent", "--chdir", target, *command],
        env=env, capture_output=True, text=True, timeout=timeout_s,
    )


CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("bwrap") is None, reason="runs Gradescope's scripts as root under bubblewrap")
def test_the_gradescope_bundle_sets_up_and_grades_the_skeleton_and_the_reference_in_gradescope_s_paths(starter, tmp_path):
    autograder = Path("/tmp") / f"kernellab-gradescope-{os.getpid()}"
    shutil.rmtree(autograder, ignore_errors=True)
    try:
        autograder.mkdir(mode=0o755)
        assert main(["--root", str(starter), "export", "gradescope", "starter", "--out", str(tmp_path)]) == 0
        # Gradescope's image build: the zip in source/, run_autograder copied beside it, setup.sh run.
        with zipfile.ZipFile(tmp_path / "kernellab-starter-gradescope.zip") as archive:
            for info in archive.infolist():
                path = Path(archive.extract(info, autograder / "source"))
                path.chmod(info.external_attr >> 16 & 0o777)
        shutil.copy2(autograder / "source/run_autograder", autograder / "run_autograder")
        env = {"PATH": CONTAINER_PATH, "HOME": "/root", "LANG": "C.UTF-8"}
        setup = bwrap_at(autograder, "/autograder", ["bash", "/autograder/source/setup.sh"], env, 3000)
        assert setup.returncode == 0, f"setup.sh failed:\n{setup.stdout[-4000:]}\n{setup.stderr[-4000:]}"
        skeleton = json.loads((autograder / "setup-check/results/results.json").read_text())
        # The submission: the reference, as a student would upload it.
        shutil.copytree(starter / "reference/starter", autograder / "submission")
        ran = bwrap_at(autograder, "/autograder", ["/autograder/run_autograder"], env, 3000)
        assert ran.returncode == 0, f"run_autograder failed:\n{ran.stdout[-4000:]}\n{ran.stderr[-4000:]}"
        reference = json.loads((autograder / "results/results.json").read_text())
    finally:
        shutil.rmtree(autograder, ignore_errors=True)
    schema = json.loads((SCHEMAS / "gradescope-results.schema.json").read_text())
    for name, results, score in (("skeleton", skeleton, 0), ("reference", reference, 100)):
        jsonschema.validate(results, schema)
        assert results["score"] == score, f"the {name} scored {results['score']}:\n{results['output']}"
        assert "Sandbox: container (no bubblewrap)" in results["output"], results["output"]
        assert {tuple(test["tags"]) for test in results["tests"]} == {("saxpy",)}
        assert results["extra_data"]["backend"] == "cpu" and results["extra_data"]["seed"] > 0


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("bwrap") is None, reason="runs PrairieLearn's entrypoint as root under bubblewrap")
def test_the_prairielearn_entrypoint_answers_a_refused_submission_as_not_gradable_in_prairielearn_s_paths(starter, tmp_path):
    course = tmp_path / "course"
    assert main(["--root", str(starter), "export", "prairielearn", "starter", "--course", str(course), "--image", "course/grader"]) == 0
    grade = Path("/tmp") / f"kernellab-prairielearn-{os.getpid()}"
    shutil.rmtree(grade, ignore_errors=True)
    try:
        # PrairieLearn's grading job: the course's serverFilesCourse entries and the student's files.
        shutil.copytree(course / "serverFilesCourse", grade / "serverFilesCourse", symlinks=False)
        (grade / "student").mkdir()
        (grade / "student" / "kernel.cu").write_text("__global__ void saxpy() {}\n")  # not the manifest's kernels.cuh
        for folder in (grade, *(path for path in grade.rglob("*") if path.is_dir())):
            folder.chmod(0o755)
        # The Python running these tests stands in for the image's, which has the grader's packages.
        env = {"PATH": CONTAINER_PATH, "HOME": "/root", "LANG": "C.UTF-8", "KERNELLAB_PYTHON": sys.executable}
        entrypoint = json.loads((course / "questions/starter/info.json").read_text())["externalGradingOptions"]["entrypoint"]
        ran = bwrap_at(grade, "/grade", [entrypoint], env, 600)
        assert ran.returncode == 0, f"{ran.stdout[-3000:]}\n{ran.stderr[-3000:]}"
        results = json.loads((grade / "results/results.json").read_text())
    finally:
        shutil.rmtree(grade, ignore_errors=True)
    jsonschema.validate(results, json.loads((SCHEMAS / "prairielearn-results.schema.json").read_text()))
    assert results["gradable"] is False
    assert len(results["format_errors"]) == 1 and "kernels.cuh" in results["format_errors"][0], results
