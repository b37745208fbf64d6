from pathlib import Path

import pytest

from kernellab.markers import MarkerError, Region, is_marked_source, strip_source, strip_tree

TASKS = ("alpha", "beta")


def strip(text: str) -> str:
    return strip_source(text, "k.cu.h", TASKS).text


def error_of(text: str, path: str = "k.cu.h") -> MarkerError:
    with pytest.raises(MarkerError) as caught:
        strip_source(text, path, TASKS)
    return caught.value


# The error tests run on a CUDA header and on a TOML answers file, whose markers are `#` comments:
# `in_syntax` rewrites a source written with `//` markers into the file's comment syntax.
SYNTAXES = pytest.mark.parametrize("path, comment", [("k.cu.h", "//"), ("answers.toml", "#")])


def in_syntax(source: str, comment: str) -> str:
    return source.replace("//", comment)


def test_stub_lines_are_uncommented_keeping_their_indentation():
    source = (
        "void f() {\n"
        "    // BEGIN SOLUTION alpha\n"
        "    solve();\n"
        "    // STUB\n"
        "    // if (x) {\n"
        "    //     stub();\n"
        "    // }\n"
        "    // END SOLUTION\n"
        "}\n"
    )
    assert strip(source) == "void f() {\n    if (x) {\n        stub();\n    }\n}\n"


def test_only_the_slashes_and_one_space_are_removed_from_a_stub_line():
    source = "// BEGIN SOLUTION alpha\n// STUB\n//x = 1;\n//   y = 2;\n\t// z = 3;\n// END SOLUTION\n"
    assert strip(source) == "x = 1;\n  y = 2;\n\tz = 3;\n"


def test_blank_stub_lines_stay_blank():
    source = "// BEGIN SOLUTION alpha\n// STUB\n// a();\n\n    \n    //\n// b();\n// END SOLUTION\n"
    assert strip(source) == "a();\n\n\n\nb();\n"


def test_a_region_without_stub_yields_nothing():
    assert strip("before\n// BEGIN SOLUTION alpha\nsolve();\n// END SOLUTION\nafter\n") == "before\nafter\n"


def test_markers_may_have_trailing_whitespace():
    source = "  // BEGIN SOLUTION alpha \t\nsolve();\n  // STUB  \n  // stub();\n  // END SOLUTION\t\n"
    assert strip(source) == "  stub();\n"


def test_lines_outside_regions_are_copied_byte_exact():
    outside = "int a;   \r\n\tint b;\x0c\n/* caf\u00e9 \udcff */\r\n\n"
    source = outside + "// BEGIN SOLUTION alpha\r\nsolve();\r\n// STUB\r\n// stub();\r\n// END SOLUTION\r\n" + outside
    assert strip(source) == outside + "stub();\r\n" + outside


def test_a_missing_final_newline_stays_missing():
    assert strip("a\nb") == "a\nb"
    assert strip("a\n// BEGIN SOLUTION alpha\n// STUB\n// s();\n// END SOLUTION") == "a\ns();"


def test_a_final_newline_stays():
    assert strip("a\n// BEGIN SOLUTION alpha\nx\n// END SOLUTION\n") == "a\n"


def test_regions_record_their_task_and_lines():
    source = "// BEGIN SOLUTION alpha\n// END SOLUTION\nx\n// BEGIN SOLUTION beta\n// STUB\n// END SOLUTION\n"
    assert strip_source(source, "k.cu", TASKS).regions == (Region("alpha", 1, 2), Region("beta", 4, 6))


def test_a_comment_that_merely_mentions_a_stub_is_not_a_marker():
    source = "// the stub below is slow\n/* STUBS are fine */\n"
    assert strip(source) == source


@SYNTAXES
def test_nested_begin_is_an_error_naming_both_lines(path: str, comment: str):
    source = "x\n// BEGIN SOLUTION alpha\ny\n// BEGIN SOLUTION beta\n// END SOLUTION\n"
    error = error_of(in_syntax(source, comment), path)
    assert error.line == 4
    assert "line 2" in error.message


@SYNTAXES
def test_end_without_an_open_region_is_an_error(path: str, comment: str):
    error = error_of(in_syntax("x\n// END SOLUTION\n", comment), path)
    assert (error.line, error.message) == (2, "END SOLUTION with no open region")


@SYNTAXES
def test_stub_outside_a_region_is_an_error(path: str, comment: str):
    error = error_of(in_syntax("// STUB\n", comment), path)
    assert (error.line, error.message) == (1, "STUB outside a region")


@SYNTAXES
def test_a_second_stub_in_one_region_is_an_error_naming_the_first(path: str, comment: str):
    source = "// BEGIN SOLUTION alpha\n// STUB\n// a();\n// STUB\n// END SOLUTION\n"
    error = error_of(in_syntax(source, comment), path)
    assert error.line == 4
    assert "line 2" in error.message


@SYNTAXES
def test_a_region_open_at_end_of_file_is_reported_at_its_begin_line(path: str, comment: str):
    error = error_of(in_syntax("x\n// BEGIN SOLUTION beta\nsolve();\n// STUB\n// s();\n", comment), path)
    assert error.line == 2
    assert "beta" in error.message and "never closed" in error.message


@SYNTAXES
def test_begin_without_a_task_id_is_an_error(path: str, comment: str):
    error = error_of(in_syntax("// BEGIN SOLUTION\n// END SOLUTION\n", comment), path)
    assert error.line == 1
    assert f"write '{comment} BEGIN SOLUTION <task-id>'" in error.message


@SYNTAXES
def test_an_unknown_task_id_is_an_error_listing_the_known_ones(path: str, comment: str):
    error = error_of(in_syntax("\n// BEGIN SOLUTION gamma\n// END SOLUTION\n", comment), path)
    assert error.line == 2
    assert "'gamma'" in error.message and "alpha, beta" in error.message


@SYNTAXES
def test_a_stub_line_not_commented_out_is_an_error(path: str, comment: str):
    source = "// BEGIN SOLUTION alpha\n// STUB\n// ok();\n    oops();\n// END SOLUTION\n"
    error = error_of(in_syntax(source, comment), path)
    assert error.line == 4
    assert "not commented out" in error.message and f"starts with '{comment}'" in error.message


@pytest.mark.parametrize(
    "marker",
    [
        "//BEGIN SOLUTION alpha",
        "// begin solution alpha",
        "// BEGIN  SOLUTION alpha",
        "// BEGIN SOLUTION  alpha",
        "// BEGIN SOLUTION alpha beta",
        "/* BEGIN SOLUTION alpha */",
        "// BEGINSOLUTION alpha",
        "/// BEGIN SOLUTION alpha",
        "/* END SOLUTION */",
        "// END SOLUTION extra",
        "//END SOLUTION",
        "// End Solution",
        "x = 1; // END SOLUTION",
        "// STUB:",
        "//STUB",
        "// stub",
        "/* STUB */",
        "// -- STUB --",
    ],
)
def test_a_malformed_marker_is_an_error(marker: str):
    error = error_of(f"int x;\n    {marker}\n")
    assert error.line == 2
    assert "malformed marker" in error.message


def test_errors_print_as_path_line_error_message():
    assert str(error_of("// END SOLUTION\n")) == "k.cu.h:1: error: END SOLUTION with no open region"


def test_only_c_cpp_and_cuda_sources_are_marked_sources():
    marked = ["a.h", "a.hpp", "a.cuh", "a.cu", "a.cpp", "a.cc", "a.c", "a.cu.h"]
    assert all(is_marked_source(Path(name)) for name in marked)
    assert not any(is_marked_source(Path(name)) for name in ["a.txt", "CMakeLists.txt", "a.py", "a.md", "h"])


def test_strip_tree_strips_sources_and_copies_other_files(tmp_path: Path):
    notes = b"// BEGIN SOLUTION is copied verbatim here\n\xff\n"
    (tmp_path / "sub").mkdir()
    (tmp_path / "notes.txt").write_bytes(notes)
    (tmp_path / "sub" / "k.cu.h").write_text(
        "// BEGIN SOLUTION alpha\na\n// STUB\n// s();\n// END SOLUTION\n// BEGIN SOLUTION beta\n// END SOLUTION\n"
    )
    assert strip_tree(tmp_path, TASKS) == {"notes.txt": notes, "sub/k.cu.h": b"s();\n"}


def test_a_task_without_a_region_in_any_file_is_an_error_naming_the_task(tmp_path: Path):
    (tmp_path / "k.cu").write_text("// BEGIN SOLUTION alpha\n// END SOLUTION\n")
    with pytest.raises(MarkerError, match="beta"):
        strip_tree(tmp_path, TASKS)


def test_an_error_in_a_tree_names_the_file_and_line(tmp_path: Path):
    (tmp_path / "k.cu").write_text("\n\n// begin solution alpha\n")
    with pytest.raises(MarkerError) as caught:
        strip_tree(tmp_path, TASKS)
    assert (caught.value.path, caught.value.line) == (tmp_path / "k.cu", 3)



def test_toml_stub_lines_are_uncommented_and_the_solution_dropped():
    source = (
        "[questions]\n"
        "# BEGIN SOLUTION alpha\n"
        'race = "the second barrier is missing"\n'
        "# STUB\n"
        '# race = ""\n'
        "#   indented = 1\n"
        "\n"
        "#\n"
        "# END SOLUTION\n"
        "after = 2\n"
    )
    assert strip_source(source, "answers.toml", TASKS).text == '[questions]\nrace = ""\n  indented = 1\n\n\nafter = 2\n'


def test_toml_comments_and_lines_outside_regions_are_copied_byte_exact():
    source = '# answers to the questions\r\nkey = "# BEGIN"\n# a stub answer is fine\n'
    assert strip_source(source, "answers.toml", TASKS).text == source


def test_slash_markers_in_a_toml_file_are_malformed_markers():
    error = error_of("x = 1\n// BEGIN SOLUTION alpha\n", "answers.toml")
    assert error.line == 2
    assert "malformed marker" in error.message and "'# BEGIN SOLUTION <task-id>'" in error.message


@pytest.mark.parametrize(
    "marker",
    [
        "#BEGIN SOLUTION alpha",
        "# begin solution alpha",
        "# BEGIN  SOLUTION alpha",
        "# BEGIN SOLUTION  alpha",
        "# BEGIN SOLUTION alpha beta",
        "# BEGINSOLUTION alpha",
        "## BEGIN SOLUTION alpha",
        "#END SOLUTION",
        "# END SOLUTION extra",
        "# End Solution",
        "x = 1 # END SOLUTION",
        "# STUB:",
        "#STUB",
        "# stub",
        "## STUB",
        "# -- STUB --",
    ],
)
def test_a_malformed_toml_marker_is_an_error(marker: str):
    error = error_of(f"x = 1\n    {marker}\n", "answers.toml")
    assert error.line == 2
    assert "malformed marker" in error.message


def test_strip_tree_strips_toml_files_by_their_hash_markers(tmp_path: Path):
    (tmp_path / "k.cu").write_text("// BEGIN SOLUTION alpha\n// END SOLUTION\n")
    (tmp_path / "answers.toml").write_text('# BEGIN SOLUTION beta\nrace = "x"\n# STUB\n# race = ""\n# END SOLUTION\n')
    assert is_marked_source(tmp_path / "answers.toml")
    assert strip_tree(tmp_path, TASKS) == {"answers.toml": b'race = ""\n', "k.cu": b""}
