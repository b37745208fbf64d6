"""What Gradescope and PrairieLearn read of a grade: Markdown output, task tags, the hidden
cases' visibility from the manifest, seed and machine in extra_data, refusals as not gradable."""

import json
from dataclasses import replace

import pytest

from helpers import REAL_ROOT, write_files
from kernellab import reports
from kernellab.manifest import ManifestError, load_manifest
from test_scoring_and_reports import a_grade, validate


def test_results_json_tags_each_test_with_its_task_and_shows_hidden_cases_as_the_manifest_says():
    grade = replace(a_grade(), environment={**a_grade().environment, "sandbox": "container (no bubblewrap): ..."})
    document = reports.gradescope(grade, hidden_visibility="after_due_date")
    validate(document, "gradescope-results.schema.json")
    by_name = {test["name"]: test for test in document["tests"]}
    assert by_name["scan-multi: hidden tests"]["visibility"] == "after_due_date"
    assert by_name["scan-multi: public tests"]["visibility"] == "visible"
    assert {test["name"]: test["tags"] for test in document["tests"] if "speed" in test["name"]} == {
        "scan-multi: speed of scanInc<Add<int>> at 2^28": ["scan-multi"]
    }
    assert all(test["tags"] == [test["name"].split(":")[0]] for test in document["tests"]), document["tests"]
    assert document["extra_data"]["seed"] == 42 and document["extra_data"]["hidden_sizes"] == [17, 555]
    assert document["extra_data"]["environment"]["gpu"] == "NVIDIA H100 80GB HBM3"


def test_the_overall_output_is_markdown_naming_the_sandbox_with_compiler_output_in_a_code_block():
    grade = replace(a_grade(), environment={"gpu": "NVIDIA H100", "sandbox": "bubblewrap (/usr/bin/bwrap)"})
    output = reports.gradescope(grade)["output"]
    assert output.startswith("**pbb: 22.5 of ") and "Sandbox: bubblewrap (/usr/bin/bwrap)." in output
    assert "| scanInc<Add<int>> | 2^28 | yours | 1161.3 |" in output, output
    broken = replace(a_grade("not graded"), message="kernels.cuh:3: error: expected ';'\nkernels.cuh:9: error: x")
    assert "```\nkernels.cuh:3: error: expected ';'\nkernels.cuh:9: error: x\n```" in reports.summary_markdown(broken)


def test_a_submission_refused_at_intake_is_not_gradable_on_prairielearn_with_the_reason():
    refused = replace(a_grade(), status="rejected", message="no pbbKernels.cu.h (or pbb_kernels.cuh) in the submission")
    document = reports.prairielearn(refused)
    validate(document, "prairielearn-results.schema.json")
    assert document["gradable"] is False
    assert document["format_errors"] == ["no pbbKernels.cu.h (or pbb_kernels.cuh) in the submission"]
    assert "format_errors" not in reports.prairielearn(a_grade())


def test_write_all_passes_the_visibility_to_results_json(tmp_path):
    reports.write_all(a_grade(), tmp_path, hidden_visibility="hidden")
    tests = json.loads((tmp_path / "results.json").read_text())["tests"]
    assert {test["visibility"] for test in tests if "hidden tests" in test["name"]} == {"hidden"}


@pytest.mark.parametrize("value", ["after_due_date", "after_published", "hidden", "visible"])
def test_the_manifest_takes_each_gradescope_visibility(tmp_path, value):
    manifest = (REAL_ROOT / "grader/kernellab/templates/starter/assignments/starter/assignment.toml").read_text()
    write_files(tmp_path / "assignments" / "starter", {"assignment.toml": manifest + f'\n[grading]\nhidden_visibility = "{value}"\n'})
    assert load_manifest(tmp_path / "assignments/starter/assignment.toml", tmp_path).grading.hidden_visibility == value


def test_an_unknown_visibility_is_a_manifest_error_naming_the_field(tmp_path):
    manifest = (REAL_ROOT / "grader/kernellab/templates/starter/assignments/starter/assignment.toml").read_text()
    write_files(tmp_path / "assignments" / "starter", {"assignment.toml": manifest + '\n[grading]\nhidden_visibility = "later"\n'})
    with pytest.raises(ManifestError, match=r"grading.hidden_visibility: expected one of visible, hidden, after_due_date, after_published, got 'later'"):
        load_manifest(tmp_path / "assignments/starter/assignment.toml", tmp_path)


def test_results_of_a_grade_in_progress_leave_no_grade_json_behind(tmp_path):
    in_progress = replace(a_grade(), message="speed: skipped, the grading deadline was near")
    reports.write_platform_results(in_progress, tmp_path, hidden_visibility="after_due_date")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["prairielearn.json", "results.json"]
    results = json.loads((tmp_path / "results.json").read_text())
    assert "speed: skipped" in results["output"] and results["score"] == 22.5
