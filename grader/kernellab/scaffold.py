"""Scaffold an assignment that builds and passes its own checks at once (`kernellab new`).

A new assignment is a copy of a source assignment with its id replaced: by default the starter
template shipped with kernellab (one task, its test, three known-wrong versions), or an
assignment of the repository. The skeleton is then generated from the reference.
"""

import re
import shutil
from pathlib import Path

from kernellab.errors import InputError, display_path
from kernellab.manifest import list_assignments, load_assignment
from kernellab.markers import strip_tree
from kernellab.skeleton import replace_tree
from kernellab.text import encode_text, read_text

TEMPLATE_ROOT = Path(__file__).resolve().parent / "templates" / "starter"
TEMPLATE_ID = "starter"
# An assignment id is a directory name and part of CMake target names (`pmph-w2_test_...`); in a
# copy of an assignment whose tests use its id as a C++ namespace (`--from`), an identifier.
ASSIGNMENT_ID = re.compile(r"[a-z][a-z0-9_-]*")
COPIED_ASSIGNMENT_ID = re.compile(r"[a-z][a-z0-9_]*")


def scaffold(root: Path, new_id: str, source_id: str | None) -> list[Path]:
    """Create the new assignment's folders and handout; returns them. Writes nothing on an error."""
    if not ASSIGNMENT_ID.fullmatch(new_id):
        raise InputError(f"{new_id!r} is not an assignment id: use {ASSIGNMENT_ID.pattern}")
    if source_id is not None and not COPIED_ASSIGNMENT_ID.fullmatch(new_id):
        raise InputError(f"{new_id!r} is not an id for a copy of {source_id!r}, whose id its code may use as a "
                         f"C++ name: use {COPIED_ASSIGNMENT_ID.pattern}")
    if new_id in list_assignments(root):
        raise InputError(f"assignment {new_id!r} exists already")
    if source_id is None:
        source_root, source_id = TEMPLATE_ROOT, TEMPLATE_ID
    else:
        source = load_assignment(root, source_id)
        if (source.reference, source.skeleton) != (f"reference/{source_id}", f"skeleton/{source_id}"):
            raise InputError(f"--from {source_id}: only an assignment whose folders are named by its id can be copied")
        source_root = root
    sources = {
        f"assignments/{new_id}": source_root / "assignments" / source_id,
        f"reference/{new_id}": source_root / "reference" / source_id,
        f"handout/{new_id}.md": source_root / "handout" / f"{source_id}.md",
    }
    targets = [root / name for name in sources] + [root / "skeleton" / new_id]
    if existing := [path for path in targets if path.exists()]:
        raise InputError(f"{display_path(existing[0])} exists already; nothing was created")
    try:
        for name, source in sources.items():
            _copy_renamed(source, root / name, source_id, new_id)
        assignment = load_assignment(root, new_id)
        replace_tree(assignment.skeleton_dir, strip_tree(assignment.reference_dir, assignment.written_task_ids))
    except BaseException:
        for path in targets:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        raise
    return targets


def _copy_renamed(source: Path, target: Path, old_id: str, new_id: str) -> None:
    """Copy a file or tree, replacing the id `old_id` with `new_id` in text and file names.

    The id is replaced where it stands as a word of letters and digits: `pbb`, `pbb::` and
    `pbb_testing.cuh` change, `pbbKernels.cu.h` does not. The reference and the known-wrong
    patches change alike, so the patches still apply.
    """
    word = re.compile(rf"(?<![A-Za-z0-9]){re.escape(old_id)}(?![A-Za-z0-9])")
    files = [source] if source.is_file() else sorted(path for path in source.rglob("*") if path.is_file())
    if not files:
        raise InputError(f"nothing to copy: {source} does not exist")
    for path in files:
        relative = "" if path == source else word.sub(new_id, path.relative_to(source).as_posix())
        destination = target / relative if relative else target
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(encode_text(word.sub(new_id, read_text(path))))
