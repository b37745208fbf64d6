"""The class files of a batch without grading anything: the gradebooks (every entry of the folder a
row, Canvas's and Moodle's import files, the roster) and the class summary (histogram, quartiles,
pass rates, speed ratios, first failures, and copydetect's similarity over real submissions)."""

import csv
import random
import shutil
import statistics
import sys

import pytest

from helpers import write_files
from kernellab.errors import InputError
from kernellab.gradebook import GradebookOptions, loose_entries, read_roster, write_gradebooks
from kernellab.grading.model import Grade, GroupResult, SpeedResult, TaskGrade, TestCaseResult
from kernellab.known_wrong import find_wrong_versions
from kernellab.manifest import load_assignment
from kernellab.patches import apply_patch, parse_patch
from kernellab.scaffold import scaffold
from kernellab.summary import HISTOGRAM_BINS, Similarity, check_similarity, html_page, markdown, summarize
from kernellab.verdict import Verdict


@pytest.fixture
def assignment(tmp_path):
    """The starter assignment `kernellab new` scaffolds: one task, saxpy, 100 points."""
    root = tmp_path / "repo"
    write_files(root, {"CMakeLists.txt": "", "assignments/.keep": ""})
    scaffold(root, "demo", None)
    return load_assignment(root, "demo")


def graded(student: str, points: float, public: str = Verdict.PASSED, hidden: str = Verdict.PASSED, failing_case: str = "",
           ratio: float | None = None) -> Grade:
    cases = (TestCaseResult(failing_case, 4, 1, "n := 1025, block := 32"),) if failing_case else ()
    groups = (GroupResult("public", public, test_cases=cases), GroupResult("hidden", hidden, test_cases=cases))
    speed = (SpeedResult("saxpy", "saxpy", 1 << 24, 0, 10, student_us=ratio * 100, reference_us=100.0),) if ratio else ()
    return Grade(student, "demo", "cuda", "graded", tasks=(TaskGrade("saxpy", "saxpy", points, 100, groups, speed=speed),))


def test_every_entry_of_the_folder_gets_a_gradebook_row_and_canvas_gets_its_points_possible_row(assignment, tmp_path):
    folder = tmp_path / "submissions"
    write_files(folder, {"ada/kernels.cuh": "", "bob.zip": "", "notes.txt": "", ".DS_Store": ""})
    (folder / "link").symlink_to(folder / "notes.txt")
    submissions = {"ada": folder / "ada", "bob": folder / "bob.zip"}
    loose = loose_entries(folder, submissions)
    assert set(loose) == {"notes.txt", ".DS_Store", "link"}
    assert loose["link"] == "not a submission: a symbolic link" and "not an archive" in loose["notes.txt"]
    roster = tmp_path / "roster.csv"
    # Canvas's own export: its "Points Possible" row is no student.
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,login\n    Points Possible,,,,,\n"
                      "\"Lovelace, Ada\",17,u17,ada@example,S1,ada\n\"Absent, Al\",18,u18,al@example,S1,al\n")
    grades = {"ada": graded("ada", 62.5), "bob": Grade("bob", "demo", "cuda", "rejected", "cannot be read as an archive",
                                                         tasks=(TaskGrade("saxpy", "saxpy", 0, 100),))}
    out = tmp_path / "out"
    out.mkdir()
    written = write_gradebooks(assignment, grades, loose, out, GradebookOptions("canvas", roster, "login"))
    assert [path.name for path in written] == ["grades.csv", "grades-canvas.csv"]
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert set(rows) == {"ada", "bob", "al", "notes.txt", ".DS_Store", "link"}
    assert (rows["ada"]["score"], rows["ada"]["saxpy"], rows["ada"]["message"]) == ("62.5", "62.5", "")
    assert rows["bob"]["status"] == "rejected" and rows["bob"]["score"] == "0" and "not in the roster" in rows["bob"]["message"]
    assert rows["al"]["status"] == "no submission" and rows["al"]["score"] == ""
    canvas = list(csv.reader((out / "grades-canvas.csv").open()))
    assert canvas[:2] == [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "demo: saxpy"],
                          ["Points Possible", "", "", "", "", "100"]]
    assert ["Lovelace, Ada", "17", "u17", "ada@example", "S1", "62.5"] in canvas
    assert ["Absent, Al", "18", "u18", "al@example", "S1", ""] in canvas
    assert ["notes.txt (" + loose["notes.txt"] + ")", "", "", "", "", ""] in canvas


def test_moodle_gets_the_roster_identity_a_grade_column_per_task_and_feedback(assignment, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("Email address,submission\nada@example.org,ada\n")
    write_gradebooks(assignment, {"ada": graded("ada", 40, hidden=Verdict.FAILED, failing_case="saxpy at hostile sizes")}, {},
                     tmp_path, GradebookOptions("moodle", roster))
    lines = list(csv.reader((tmp_path / "grades-moodle.csv").open()))
    assert lines == [["Email address", "submission", "demo: saxpy", "feedback"],
                     ["ada@example.org", "ada", "40", "40 of 100 points; saxpy: hidden: FAILED: saxpy at hostile sizes"]]


def test_a_roster_without_the_key_column_or_with_a_name_twice_is_an_input_error(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("name,email\nada,a@x\n")
    with pytest.raises(InputError, match="no column 'submission' \\(its columns: name, email\\)"):
        read_roster(roster, "submission")
    roster.write_text("submission\nada\nada\n")
    with pytest.raises(InputError, match="'ada' appears twice"):
        read_roster(roster, "submission")


def test_the_summary_counts_scores_pass_rates_speed_ratios_and_first_failures(assignment):
    chooser = random.Random(2024)
    grades = {}
    for index in range(37):
        verdict = chooser.choice([Verdict.PASSED, Verdict.PASSED, Verdict.FAILED, Verdict.BUILD_FAILED])
        points = chooser.choice([100.0, 87.5, 75.0]) if verdict == Verdict.PASSED else chooser.uniform(0, 50)
        case = "saxpy at hostile sizes" if verdict == Verdict.FAILED else ""
        grades[f"s{index:02d}"] = graded(f"s{index:02d}", round(points, 2), public=verdict, hidden=verdict,
                                          failing_case=case, ratio=chooser.uniform(0.9, 3.0) if verdict == Verdict.PASSED else None)
    grades["lost"] = None
    summary = summarize(assignment, grades, {"notes.txt": "not a submission: a file"}, Similarity(0, (), "not checked"))
    scores = sorted(grade.score for grade in grades.values() if grade)
    assert summary.counts == {"graded": 37, "not graded": 1, "not a submission": 1}
    assert sum(count for _low, _high, count in summary.histogram) == 37 and len(summary.histogram) == HISTOGRAM_BINS
    assert summary.histogram[-1][2] == sum(score >= 90 for score in scores), "100 points belong in the last bin"
    for low, high, count in summary.histogram[:-1]:
        assert count == sum(low <= score < high for score in scores), (low, high, scores)
    assert summary.statistics["mean"] == pytest.approx(statistics.fmean(scores))
    assert summary.statistics["median"] == pytest.approx(statistics.median(scores))
    passed = sum(grade.tasks[0].groups[0].verdict == Verdict.PASSED for grade in grades.values() if grade)
    assert summary.pass_rates["saxpy"] == {"public": (passed, 37), "hidden": (passed, 37)}
    assert len(summary.speed["saxpy: saxpy at 2^24"]) == passed
    failures = dict(summary.first_failures["saxpy"])
    assert failures["public: FAILED: saxpy at hostile sizes"] + failures["public: build failed"] == 37 - passed
    text = markdown(summary)
    assert f"| saxpy | public | {passed} | 37 | {100 * passed / 37:.0f}% |" in text and "| 90-100 |" in text
    page = html_page(summary)
    assert page.count('class="bar"') == HISTOGRAM_BINS and f"<td>public</td><td>{passed}</td><td>37</td>" in page


# What every grade on the CPU backend says (grading/pipeline.py): a note, not a failure.
LARGE_CASES_NOTE = "the large cases (the course's own array sizes) run on a GPU only: a GPU grade runs them with the hidden cases"
UNMET = "no points: saxpy: 3 reads per element, required at most 2"


def cpu_graded(student: str, public: str = Verdict.PASSED, property_met: bool = True, own_note: str = "") -> Grade:
    """A grade as the CPU backend makes it: 87.5 correctness points in two groups, the 12.5 speed
    points not given, the note on the large cases in the message and the task's feedback; a
    required property not met leaves the groups passed, without their points."""
    earned = property_met and public == Verdict.PASSED
    cases = () if public == Verdict.PASSED else (TestCaseResult("saxpy at hostile sizes", 4, 1, "n := 1025"),)
    groups = (GroupResult("public", public, test_cases=cases, points=43.75 if earned else 0, max_points=43.75),
              GroupResult("hidden", Verdict.PASSED, points=43.75 if property_met else 0, max_points=43.75))
    feedback = "\n".join(filter(None, ("" if property_met else UNMET, LARGE_CASES_NOTE)))
    task = TaskGrade("saxpy", "saxpy", sum(group.points for group in groups), 100, groups, feedback)
    return Grade(student, "demo", "cpu", "graded", "\n".join(filter(None, (LARGE_CASES_NOTE, own_note))), tasks=(task,))


def test_the_class_view_counts_passed_without_points_as_not_passed_and_no_note_as_a_failure(assignment, tmp_path):
    skipped = "skipped: confirming failures alone (the grading deadline was near)"
    grades = {"perfect": cpu_graded("perfect"), "unmet": cpu_graded("unmet", property_met=False),
              "failed": cpu_graded("failed", public=Verdict.FAILED, own_note=skipped)}
    summary = summarize(assignment, grades, {}, Similarity(0, (), "not checked"))
    assert summary.pass_rates["saxpy"] == {"public": (1, 3), "hidden": (2, 3)}
    assert dict(summary.first_failures["saxpy"]) == {UNMET: 1, "public: FAILED: saxpy at hostile sizes": 1}
    text = markdown(summary)
    assert text.count(LARGE_CASES_NOTE) == 1 and f"Every grade says: {LARGE_CASES_NOTE}" in text
    assert "| saxpy | public | 1 | 3 | 33% |" in text

    write_gradebooks(assignment, grades, {}, tmp_path, GradebookOptions("moodle"))
    messages = {row["student"]: row["message"] for row in csv.DictReader((tmp_path / "grades.csv").open())}
    assert messages == {"perfect": "", "unmet": f"saxpy: {UNMET}", "failed": f"saxpy: public: FAILED: saxpy at hostile sizes; {skipped}"}
    feedback = {row["submission"]: row["feedback"] for row in csv.DictReader((tmp_path / "grades-moodle.csv").open())}
    assert feedback == {"perfect": "87.5 of 100 points", "unmet": f"0 of 100 points; saxpy: {UNMET}",
                        "failed": f"43.75 of 100 points; saxpy: public: FAILED: saxpy at hostile sizes; {skipped}"}


def test_copydetect_finds_known_wrong_versions_of_one_solution_and_not_an_independent_one(assignment, tmp_path, monkeypatch):
    pytest.importorskip("copydetect", reason="the similarity report's optional dependency")
    folder = tmp_path / "submissions"
    shutil.copytree(assignment.reference_dir, folder / "reference")
    shutil.copytree(assignment.skeleton_dir, folder / "skeleton")
    wrong = [patch_file.stem for _task, patch_file in find_wrong_versions(assignment, None)]
    for _task, patch_file in find_wrong_versions(assignment, None):
        shutil.copytree(assignment.reference_dir, folder / patch_file.stem)
        apply_patch(parse_patch(patch_file), folder / patch_file.stem)
    own = (assignment.skeleton_dir / "kernels.cuh").read_text().replace(
        "// Missing: write the kernel's body.",
        "const uint32_t stride = gridDim.x * blockDim.x;\n"
        "    for (uint32_t k = threadIdx.x + blockIdx.x * blockDim.x; k < n; k += stride) {\n"
        "        const float old = y[k];\n        y[k] = fmaf(a, x[k], old);\n    }")
    assert "stride" in own, "the skeleton's stub comment changed: update this test"
    write_files(folder, {"independent/kernels.cuh": own, "rejected/readme.txt": "no kernels.cuh"})
    # Every pair, to compare shares: copydetect hashes with Python's per-process string hash, so
    # a share moves by some points from run to run (two lines of saxpy are little code).
    monkeypatch.setattr("kernellab.summary.SIMILARITY_THRESHOLD", 0.0)
    found = check_similarity(assignment, {path.name: path for path in folder.iterdir()})
    assert found.compared == 6 and not found.problem  # the rejected one has no files to compare
    share = {frozenset((pair.first, pair.second)): max(pair.first_share, pair.second_share) for pair in found.pairs}
    copies = [share[frozenset(("reference", name))] for name in wrong]
    independent = [value for pair, value in share.items() if "independent" in pair]
    assert min(copies) >= 0.8 and max(independent, default=0) <= 0.7, share
    assert not any("skeleton" in pair for pair in share), f"the skeleton is the base code, it shares nothing: {share}"


def test_without_copydetect_the_summary_says_how_to_install_it(assignment, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "copydetect", None)  # what an environment without it gives: ImportError
    write_files(tmp_path, {"ada/kernels.cuh": (assignment.reference_dir / "kernels.cuh").read_text()})
    found = check_similarity(assignment, {"ada": tmp_path / "ada"})
    assert found.problem == "not checked: copydetect is not installed; pip install 'kernellab[similarity]' (copydetect)"
    summary = summarize(assignment, {"ada": graded("ada", 100)}, {}, found)
    assert found.problem in markdown(summary)
