from pathlib import Path

import pytest

from helpers import write_files
from kernellab.patches import MAX_FLOAT_LINES, PatchError, apply_patch, parse_patch

ORIGINAL = "".join(f"line {number}\n" for number in range(1, 31))

ONE_HUNK = """Drops the barrier between the two phases.

Longer notes: the race shows only with more than one warp.

--- a/k.cu.h
+++ b/k.cu.h
@@ -4,5 +4,4 @@
 line 4
 line 5
-line 6
 line 7
 line 8
"""


def patched(tmp_path: Path, patch_text: str, files: dict[str, str] | None = None) -> dict[str, str]:
    solution = tmp_path / "solution"
    write_files(solution, files or {"k.cu.h": ORIGINAL})
    write_files(tmp_path, {"bug.patch": patch_text})
    apply_patch(parse_patch(tmp_path / "bug.patch"), solution)
    return {path.name: path.read_text() for path in solution.iterdir()}


def patch_error(tmp_path: Path, patch_text: str, files: dict[str, str] | None = None) -> PatchError:
    with pytest.raises(PatchError) as caught:
        patched(tmp_path, patch_text, files)
    return caught.value


def test_the_description_is_the_first_non_empty_line(tmp_path: Path):
    write_files(tmp_path, {"bug.patch": "\n\n" + ONE_HUNK})
    patch = parse_patch(tmp_path / "bug.patch")
    assert patch.description == "Drops the barrier between the two phases."
    assert [file_diff.path for file_diff in patch.files] == ["k.cu.h"]


def test_a_patch_applies_at_its_stated_position(tmp_path: Path):
    assert patched(tmp_path, ONE_HUNK)["k.cu.h"] == ORIGINAL.replace("line 6\n", "")


def test_a_hunk_floats_when_lines_were_added_above_it(tmp_path: Path):
    shifted = "new a\nnew b\nnew c\n" + ORIGINAL
    assert patched(tmp_path, ONE_HUNK, {"k.cu.h": shifted})["k.cu.h"] == shifted.replace("line 6\n", "")


def test_a_hunk_floats_when_lines_were_removed_above_it(tmp_path: Path):
    shortened = ORIGINAL.replace("line 1\nline 2\n", "")
    assert patched(tmp_path, ONE_HUNK, {"k.cu.h": shortened})["k.cu.h"] == shortened.replace("line 6\n", "")


def test_a_hunk_does_not_float_further_than_the_limit(tmp_path: Path):
    shifted = "".join(f"new {number}\n" for number in range(MAX_FLOAT_LINES + 1)) + ORIGINAL
    error = patch_error(tmp_path, ONE_HUNK, {"k.cu.h": shifted})
    assert "does not apply" in error.message


def test_later_hunks_follow_the_offset_of_earlier_ones(tmp_path: Path):
    patch_text = """Two changes.
--- a/k.cu.h
+++ b/k.cu.h
@@ -2,2 +2,5 @@
 line 2
+added 1
+added 2
+added 3
 line 3
@@ -20,3 +23,3 @@
 line 20
-line 21
+LINE 21
 line 22
"""
    expected = ORIGINAL.replace("line 2\n", "line 2\nadded 1\nadded 2\nadded 3\n").replace("line 21", "LINE 21")
    assert patched(tmp_path, patch_text)["k.cu.h"] == expected


def test_a_patch_may_change_several_files(tmp_path: Path):
    patch_text = """Off by one in both files.
diff --git a/a.h b/a.h
index 1111111..2222222 100644
--- a/a.h\t2024-01-01 00:00:00
+++ b/a.h\t2024-01-01 00:00:00
@@ -1 +1 @@
-int n = 4;
+int n = 5;
diff --git a/b.cu b/b.cu
--- a/b.cu
+++ b/b.cu
@@ -1,0 +2 @@
+extra();
"""
    result = patched(tmp_path, patch_text, {"a.h": "int n = 4;\n", "b.cu": "first();\nlast();\n"})
    assert result == {"a.h": "int n = 5;\n", "b.cu": "first();\nextra();\nlast();\n"}


def test_a_mismatch_is_an_error_naming_the_patch_file_the_target_file_and_the_hunk(tmp_path: Path):
    error = patch_error(tmp_path, ONE_HUNK, {"k.cu.h": ORIGINAL.replace("line 6", "line six")})
    assert error.path == tmp_path / "bug.patch"
    assert error.line == 7
    assert "hunk #1 @@ -4,5 +4,4 @@ does not apply to k.cu.h" in error.message
    assert "line 6 is 'line six\\n', the hunk expects 'line 6\\n'" in error.message


def test_nothing_is_written_when_a_later_file_fails(tmp_path: Path):
    patch_text = """Two files.
--- a/a.h
+++ b/a.h
@@ -1 +1 @@
-a
+A
--- a/b.h
+++ b/b.h
@@ -1 +1 @@
-not there
+B
"""
    patch_error(tmp_path, patch_text, {"a.h": "a\n", "b.h": "b\n"})
    assert (tmp_path / "solution" / "a.h").read_text() == "a\n"


def test_a_missing_target_file_is_an_error(tmp_path: Path):
    error = patch_error(tmp_path, ONE_HUNK, {"other.h": ORIGINAL})
    assert "k.cu.h: no such file" in error.message


def test_removing_the_final_newline_is_applied(tmp_path: Path):
    patch_text = """Drops the final newline.
--- a/k.h
+++ b/k.h
@@ -1,2 +1,2 @@
 a
-b
+b
\\ No newline at end of file
"""
    assert patched(tmp_path, patch_text, {"k.h": "a\nb\n"})["k.h"] == "a\nb"


def test_a_file_without_a_final_newline_can_be_patched(tmp_path: Path):
    patch_text = """Appends a line.
--- a/k.h
+++ b/k.h
@@ -1,2 +1,3 @@
 a
-b
\\ No newline at end of file
+b
+c
\\ No newline at end of file
"""
    assert patched(tmp_path, patch_text, {"k.h": "a\nb"})["k.h"] == "a\nb\nc"


def test_context_without_its_final_newline_does_not_match_a_line_that_has_one(tmp_path: Path):
    patch_text = "Bug.\n--- a/k.h\n+++ b/k.h\n@@ -1 +1 @@\n-b\n\\ No newline at end of file\n+c\n"
    assert "does not apply" in patch_error(tmp_path, patch_text, {"k.h": "b\n"}).message


def test_an_empty_line_in_a_hunk_is_a_blank_context_line(tmp_path: Path):
    patch_text = "Bug.\n--- a/k.h\n+++ b/k.h\n@@ -1,3 +1,3 @@\n a\n\n-c\n+C\n"
    assert patched(tmp_path, patch_text, {"k.h": "a\n\nc\n"})["k.h"] == "a\n\nC\n"


def test_a_patch_without_a_description_is_an_error(tmp_path: Path):
    error = patch_error(tmp_path, ONE_HUNK[ONE_HUNK.index("--- a/"):])
    assert "description" in error.message


def test_a_hunk_shorter_than_its_header_is_an_error(tmp_path: Path):
    error = patch_error(tmp_path, ONE_HUNK.removesuffix(" line 8\n"))
    assert error.line == 7
    assert "ends early" in error.message


def test_a_hunk_longer_than_its_header_is_an_error(tmp_path: Path):
    error = patch_error(tmp_path, ONE_HUNK.replace("@@ -4,5 +4,4 @@", "@@ -4,4 +4,3 @@"))
    assert "unexpected line between file diffs" in error.message


def test_a_path_outside_the_solution_directory_is_an_error(tmp_path: Path):
    error = patch_error(tmp_path, ONE_HUNK.replace("a/k.cu.h", "a/../k.cu.h"))
    assert "not a path inside the solution directory" in error.message


def test_creating_a_file_is_not_supported(tmp_path: Path):
    error = patch_error(tmp_path, ONE_HUNK.replace("--- a/k.cu.h", "--- /dev/null"))
    assert "not supported" in error.message
