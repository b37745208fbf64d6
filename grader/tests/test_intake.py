"""Intake: which files of a submission are taken, and which submissions are refused and why."""

import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

import pytest

from helpers import REAL_ROOT, write_files
from kernellab.intake import MAX_FILE_BYTES, SubmissionRejected, take
from kernellab.manifest import load_assignment

PBB = load_assignment(REAL_ROOT, "pbb")
SOURCES = {"pbbKernels.cu.h": "// kernels\n", "hostSkel.cu.h": "// host\n"}


def zip_of(path: Path, files: dict[str, bytes | str], links: dict[str, str] = {}) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
        for name, target in links.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)
            archive.writestr(info, target)
    return path


def tar_of(path: Path, members: list[tarfile.TarInfo], contents: dict[str, bytes] = {}) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for member in members:
            data = contents.get(member.name)
            if data is not None:
                member.size = len(data)
            archive.addfile(member, io.BytesIO(data) if data is not None else None)
    return path


def test_a_folder_gives_its_named_files_and_ignores_the_rest(tmp_path):
    write_files(tmp_path / "alice", {**SOURCES, "tests/test_copy.cu": "// their own tests\n", "notes.txt": "hi"})
    intake = take(tmp_path / "alice", PBB, tmp_path / "job")
    assert intake.files == ("hostSkel.cu.h", "pbbKernels.cu.h")
    assert sorted(intake.ignored) == ["notes.txt", "tests/test_copy.cu"]
    assert (tmp_path / "job" / "hostSkel.cu.h").read_text() == "// host\n"


def test_an_archive_with_the_2024_names_inside_a_folder_is_taken(tmp_path):
    archive = zip_of(tmp_path / "bob.zip", {"bob/pbb_kernels.cuh": "// k", "bob/host_skel.cuh": "// h", "bob/constants.cuh": "// c"})
    intake = take(archive, PBB, tmp_path / "job")
    assert intake.files == ("constants.cuh", "host_skel.cuh", "pbb_kernels.cuh")


def test_a_tar_gz_is_taken(tmp_path):
    members = [tarfile.TarInfo(name) for name in SOURCES]
    archive = tar_of(tmp_path / "carol.tar.gz", members, {name: text.encode() for name, text in SOURCES.items()})
    assert take(archive, PBB, tmp_path / "job").files == ("hostSkel.cu.h", "pbbKernels.cu.h")


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda d: zip_of(d / "s.zip", {**SOURCES, "../evil.cu.h": "x"}), "leaves the submission"),
        (lambda d: zip_of(d / "s.zip", {**SOURCES, "/etc/passwd": "x"}), "leaves the submission"),
        (lambda d: zip_of(d / "s.zip", SOURCES, links={"constants.cu.h": "/etc/shadow"}), "symbolic link"),
        (lambda d: zip_of(d / "s.zip", {"pbbKernels.cu.h": "x"}), "has no hostSkel.cu.h or host_skel.cuh"),
        (lambda d: zip_of(d / "s.zip", {**SOURCES, "copy/hostSkel.cu.h": "y"}), "appears twice"),
        (lambda d: zip_of(d / "s.zip", {**SOURCES, "host_skel.cuh": "y"}), "the same file twice"),
        (lambda d: zip_of(d / "s.zip", {**SOURCES, "constants.cu.h": b"x" * (MAX_FILE_BYTES + 1)}), "bytes"),
        (lambda d: (d / "s.zip").write_bytes(b"PK\x03\x04 not really a zip") and d / "s.zip", "cannot be read as an archive"),
        (lambda d: (d / "s.rar").write_bytes(b"x") and d / "s.rar", "not a folder or an archive"),
        (lambda d: d / "nothing-here", "no such file or folder"),
    ],
)
def test_a_hostile_or_broken_submission_is_refused_with_the_reason(tmp_path, make, reason):
    with pytest.raises(SubmissionRejected, match=reason):
        take(make(tmp_path), PBB, tmp_path / "job")


def test_tar_links_devices_and_traversal_are_refused(tmp_path):
    link = tarfile.TarInfo("hostSkel.cu.h")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    device = tarfile.TarInfo("dev")
    device.type = tarfile.CHRTYPE
    traversal = tarfile.TarInfo("../../pbbKernels.cu.h")
    for member, reason in ((link, "symbolic link"), (device, "device file"), (traversal, "leaves the submission")):
        archive = tar_of(tmp_path / f"{member.name.replace('/', '_')}.tar.gz", [member], {"../../pbbKernels.cu.h": b"x"})
        with pytest.raises(SubmissionRejected, match=reason):
            take(archive, PBB, tmp_path / f"job-{member.type}")


def test_a_folder_with_a_link_or_a_pipe_is_refused(tmp_path):
    write_files(tmp_path / "dave", SOURCES)
    os.symlink("/etc/passwd", tmp_path / "dave" / "constants.cu.h")
    with pytest.raises(SubmissionRejected, match="symbolic link"):
        take(tmp_path / "dave", PBB, tmp_path / "job")
    write_files(tmp_path / "erin", SOURCES)
    os.mkfifo(tmp_path / "erin" / "pipe")
    with pytest.raises(SubmissionRejected, match="named pipe"):
        take(tmp_path / "erin", PBB, tmp_path / "job2")


def test_an_archive_that_lies_about_its_sizes_stops_at_the_limit(tmp_path):
    # A zip bomb: the stated size is small, what unpacks is not. Forge the central directory's size.
    archive = zip_of(tmp_path / "bomb.zip", {**SOURCES, "constants.cu.h": b"\0" * (MAX_FILE_BYTES + 10)})
    data = bytearray(archive.read_bytes())
    # Both size fields of the big member (local header and central directory) are rewritten to 1 KiB.
    big = (MAX_FILE_BYTES + 10).to_bytes(4, "little")
    data = data.replace(big, (1024).to_bytes(4, "little"))
    archive.write_bytes(bytes(data))
    with pytest.raises(SubmissionRejected):
        take(archive, PBB, tmp_path / "job")


@pytest.mark.parametrize(
    "code, named, line",
    [
        ('#include "kernellab/compare.hpp"\n', "includes kernellab/compare.hpp", 2),
        ("#define KL_REQUIRE_EQUAL(d, h, e, l) (void)0\n", "defines KL_REQUIRE_EQUAL", 2),
        ("template<> void kernellab::recordEqual<int>();\n", "uses recordEqual", 2),
        ("int patch = mprotect(page, 4096, 7);\n", "uses mprotect", 2),
        # What a regex over lines missed: a comment opened and closed inside string literals, a
        # name split by a line splice, a macro pasted together, the role the build fixes.
        ('const char* a = "/*";\n#define KL_REQUIRE_EQUAL(d, h, e, l) (void)0\nconst char* b = "*/";\n',
         "defines KL_REQUIRE_EQUAL", 3),
        ("#undef KL_REQUIRE_\\\nEQUAL\n", "undefs KL_REQUIRE_EQUAL", 2),
        ("#define PASTE(a, b) a##b\nint x = PASTE(Reco, rder)::instance();\n", "uses Recorder", 3),
        ("#define KERNELLAB_RECORD_ROLE 2\n", "defines KERNELLAB_RECORD_ROLE", 2),
        ("#define download() download(); steal()\n", "defines download, a name of the grader's tests or harness", 2),
        # A measurement made by the code under test: a warp scan's result of depth 0.
        ("template<class T> T shallow(int v) { return kernellab::DepthMeasure::leaf(v); }\n", "uses DepthMeasure", 2),
    ],
    ids=["include", "define", "specialization", "mprotect", "comment-in-strings", "line-splice", "pasted", "role",
         "test-name", "depth-measure"],
)
def test_code_that_reaches_into_the_harness_is_refused_with_its_line(tmp_path, code, named, line):
    write_files(tmp_path / "alice", {**SOURCES, "hostSkel.cu.h": "// host\n" + code})
    with pytest.raises(SubmissionRejected, match=re.escape(f"hostSkel.cu.h:{line} reaches into the grader's test harness ({named}")):
        take(tmp_path / "alice", PBB, tmp_path / "job")


def test_the_harness_named_in_a_comment_or_its_cuda_helpers_are_accepted(tmp_path):
    code = '// KL_REQUIRE_EQUAL checks it\n/* mprotect */\n#include "kernellab/cuda_check.hpp"\n'
    write_files(tmp_path / "alice", {**SOURCES, "hostSkel.cu.h": code})
    assert take(tmp_path / "alice", PBB, tmp_path / "job").files == ("hostSkel.cu.h", "pbbKernels.cu.h")


# CS149's assignment 3 as students hand it in (create_submission.sh: `tar -czvf asst3.tar.gz saxpy
# scan render`): three parts, each with its own copy of CycleTimer.h; the scan's code is scan/scan.cu.
CS149 = load_assignment(REAL_ROOT, "cs149-scan")
CS149_HANDIN = {
    "saxpy/CycleTimer.h": "// saxpy's timer\n",
    "saxpy/Makefile": "all:\n",
    "saxpy/main.cpp": "int main() { return 0; }\n",
    "saxpy/saxpy.cu": "// saxpy\n",
    "scan/CycleTimer.h": "// scan's timer\n",
    "scan/Makefile": "all:\n",
    "scan/checker.py": "print('checker')\n",
    "scan/main.cpp": "int main() { return 0; }\n",
    "scan/scan.cu": "// the student's scan\n",
    "render/CycleTimer.h": "// render's timer\n",
    "render/cudaRenderer.cu": "// renderer\n",
    "render/exclusiveScan.cu_inl": "// the render part's scan\n",
}


def test_the_course_layout_gives_scan_cu_and_its_own_timer_header(tmp_path):
    write_files(tmp_path / "asst3", CS149_HANDIN)
    intake = take(tmp_path / "asst3", CS149, tmp_path / "job")
    assert intake.files == ("CycleTimer.h", "scan.cu")
    assert (tmp_path / "job" / "scan.cu").read_text() == "// the student's scan\n"
    assert (tmp_path / "job" / "CycleTimer.h").read_text() == "// scan's timer\n"
    assert "scan/main.cpp" in intake.ignored and "saxpy/CycleTimer.h" in intake.ignored


def test_the_course_tar_gz_is_taken_like_its_folder(tmp_path):
    members = [tarfile.TarInfo(name) for name in CS149_HANDIN]
    archive = tar_of(tmp_path / "asst3.tar.gz", members, {name: text.encode() for name, text in CS149_HANDIN.items()})
    assert take(archive, CS149, tmp_path / "job").files == ("CycleTimer.h", "scan.cu")
    assert (tmp_path / "job" / "CycleTimer.h").read_text() == "// scan's timer\n"


def test_scan_cu_alone_is_enough(tmp_path):
    write_files(tmp_path / "s", {"scan.cu": "// scan\n"})
    assert take(tmp_path / "s", CS149, tmp_path / "job").files == ("scan.cu",)


@pytest.mark.parametrize("files", [
    # Two copies of the entry file: which one is the student's is not the grader's guess.
    {**CS149_HANDIN, "old/scan.cu": "// an older scan\n"},
    # A header in two folders, neither beside scan.cu.
    {"scan/scan.cu": "// scan\n", "saxpy/CycleTimer.h": "// a\n", "render/CycleTimer.h": "// b\n"},
])
def test_copies_that_the_entry_files_folder_does_not_decide_are_refused(tmp_path, files):
    write_files(tmp_path / "s", files)
    with pytest.raises(SubmissionRejected, match="appears twice"):
        take(tmp_path / "s", CS149, tmp_path / "job")
