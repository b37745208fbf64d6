from pathlib import Path

from kernellab.junit import failed_test_cases

# What Catch2's JUnit reporter writes (v3; v2 differs only in attributes).
REPORT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="pbb_test_scan_block" errors="1" failures="2" skipped="0" tests="4" hostname="tbd" time="0.5">
    <properties><property name="random-seed" value="42"/></properties>
    <testcase classname="pbb_test_scan_block.global" name="scanIncBlock small" time="0.1"/>
    <testcase classname="pbb_test_scan_block.global" name="scanIncBlock large/1024 threads" time="0.2">
      <failure message="REQUIRE( out == expected )" type="REQUIRE">
FAILED:
  REQUIRE( out == expected )
at scan_block.cpp:42
      </failure>
    </testcase>
    <testcase classname="pbb_test_scan_block.global" name="scanIncBlock large/1024 threads" time="0.1">
      <failure message="again" type="CHECK"/>
    </testcase>
    <testcase classname="pbb_test_scan_block.global" name="scanIncBlock throws" time="0.1">
      <error message="unexpected exception" type="TEST_CASE"/>
    </testcase>
    <system-out/>
    <system-err/>
  </testsuite>
</testsuites>
"""


def write(tmp_path: Path, text: str) -> Path:
    report = tmp_path / "report.xml"
    report.write_text(text)
    return report


def test_a_passing_report_has_no_failed_test_cases(tmp_path: Path):
    passing = REPORT.split("<testcase")[0] + '<testcase name="ok"/></testsuite></testsuites>\n'
    assert failed_test_cases(write(tmp_path, passing)) == []


def test_failed_and_errored_test_cases_are_listed_once_in_report_order(tmp_path: Path):
    assert failed_test_cases(write(tmp_path, REPORT)) == ["scanIncBlock large/1024 threads", "scanIncBlock throws"]


def test_a_truncated_report_yields_the_failures_read_before_the_cut(tmp_path: Path):
    cut = REPORT[: REPORT.index('name="scanIncBlock throws"') + 10]
    assert failed_test_cases(write(tmp_path, cut)) == ["scanIncBlock large/1024 threads"]


def test_a_report_with_garbage_after_a_failure_yields_that_failure(tmp_path: Path):
    cut = REPORT[: REPORT.index('<testcase classname="pbb_test_scan_block.global" name="scanIncBlock throws"')]
    assert failed_test_cases(write(tmp_path, cut + "<<<\x00 crash")) == ["scanIncBlock large/1024 threads"]


def test_an_empty_report_yields_nothing(tmp_path: Path):
    assert failed_test_cases(write(tmp_path, "")) == []


def test_a_missing_report_yields_nothing(tmp_path: Path):
    assert failed_test_cases(tmp_path / "never-written.xml") == []
