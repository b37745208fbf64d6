"""The compile caches of the grader's builds: ccache, keyed by what a compilation reads (the
compiler's content, its arguments, the preprocessed source), started by CMake in front of each
compiler (CMAKE_<LANG>_COMPILER_LAUNCHER) and kept from one grading run to the next in the same
work folder. Two caches, by what their objects hold:

- HARNESS: objects of the grader's own code alone (Catch2's main, the CPU runtime, the GPU's
  host-traffic wrappers), written by the harness warm-up of grading/reference.py with a student
  build's flags, and read by every build of student code of a grading run or batch. A student
  build only reads it: ccache there runs read-only (CCACHE_READONLY, no statistics, temporary
  files in the build folder), and the folder is bound read-only into the build's sandbox
  (bubblewrap) or is root's and not writable by the step's uid (the container sandbox). A
  student's compiler can therefore never store an object under the key of a translation unit
  that another build will look up (docs/threat-model.md).
- REFERENCE: the reference's builds' own, which hold the reference's compiled code: the grader's
  alone (umask 077), never seen by a step of student code.

No object a student build compiles is shared with another build: a student's code is in every
test's translation unit, and a cache that one student could write another could be poisoned by.
"""

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from kernellab import compiler_slots

# Where the caches are: this variable's folder, else the folder FOLDER of the grading run's work
# folder; "off" builds without them. Without ccache on PATH every build compiles everything.
LOCATION_VARIABLE = "KERNELLAB_COMPILE_CACHE"
FOLDER = "compile-cache"
HARNESS, REFERENCE = "harness", "reference"
# The languages the project enables (CMakeLists.txt: CXX, and CUDA where nvcc is found).
LANGUAGES = ("CXX", "CUDA")
# Enough for some hundred builds of every assignment; ccache evicts the least recently used.
MAX_SIZE = "5G"


@dataclass(frozen=True)
class CompileCache:
    folder: Path
    ccache: str
    # The reference's: its files the grader's alone.
    private: bool = False

    def environment(self, build_dir: Path, writes: bool) -> dict[str, str]:
        """ccache's settings for one build: a writer stores what it compiles (readable by all
        unless the cache is private), keyed by the compiler's content, not its time stamp; a
        reader only looks up, writing its temporary files in its own build folder. What ccache
        runs of the compiler, to compile or to preprocess, it runs through the machine's compiler
        slots (compiler_slots.py); an object found in the cache takes none. With the slots in
        front of ccache, hits waited for slots: on an H100 host a task's build waited 5 s for
        two harness objects that were in the cache (docs/performance.md)."""
        settings = {"CCACHE_DIR": str(self.folder), "CCACHE_COMPILERCHECK": "content", "CCACHE_MAXSIZE": MAX_SIZE,
                    "CCACHE_UMASK": "077" if self.private else "022"}
        slots = compiler_slots.launcher()
        if slots:
            settings |= {"CCACHE_PREFIX": str(slots), "CCACHE_PREFIX_CPP": str(slots)}
        if writes:
            return settings
        return {**settings, "CCACHE_READONLY": "1", "CCACHE_NOSTATS": "1",
                "CCACHE_TEMPDIR": str(build_dir / "ccache-tmp")}


def for_work(work: Path, kind: str) -> CompileCache | None:
    """The cache `kind` (HARNESS or REFERENCE) of the grading runs in `work` (LOCATION_VARIABLE
    overrides the folder); None where caching is off or ccache is not installed."""
    chosen = os.environ.get(LOCATION_VARIABLE, "")
    ccache = shutil.which("ccache")
    if chosen == "off" or ccache is None:
        return None
    top = Path(chosen).absolute() if chosen else work / FOLDER
    top.mkdir(parents=True, exist_ok=True)
    top.chmod(0o711)  # searchable, not listable
    folder = top / kind
    folder.mkdir(exist_ok=True)
    folder.chmod(0o700 if kind == REFERENCE else 0o755)
    return CompileCache(folder, ccache, private=kind == REFERENCE)


def configure_args(cache: CompileCache | None) -> tuple[str, ...]:
    """CMake's arguments that put a launcher in front of each compiler of a build folder: ccache
    where there is a `cache` (which takes a compiler slot for what it compiles: its
    environment()), else the machine's compiler slots (compiler_slots.py). Always given, so that
    a folder configured once with a cache and then without one drops ccache."""
    launchers = [cache.ccache] if cache else [str(path) for path in [compiler_slots.launcher()] if path]
    return tuple(f"-DCMAKE_{language}_COMPILER_LAUNCHER={';'.join(launchers)}" for language in LANGUAGES)


def readable(cache: CompileCache | None) -> tuple[Path, ...]:
    """What a build's sandbox step must read for its launchers: the compiler slots' folder and
    the cache's."""
    slots = compiler_slots.launcher()
    return (*([slots.parent] if slots else []), *([cache.folder] if cache else []))


def is_launcher(program: str) -> bool:
    """Whether a word at the start of a compile command is one of the launchers (compiled_checks.py
    then reads the compiler's command after them)."""
    return Path(program).name in ("ccache", compiler_slots.LAUNCHER)
