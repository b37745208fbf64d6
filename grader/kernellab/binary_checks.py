"""Static checks of the built programs: what each one's compiler read and what its linker put in.

Per built program (a test executable, or the speed program), beyond what the same program built
from the reference shows:
- the headers of a forbidden library its objects include, from Ninja's log of the compiler's own
  dependency output (the include graph a macro cannot hide);
- the forbidden names among its symbols (`nm -C`: what the linker pulled in);
- the functions and variables it defines that a shared library it loads also defines (libc's
  fwrite or clock_gettime, libstdc++'s): the program's definition replaces the library's for the
  whole process, the harness's calls included, so it could rewrite the records the harness writes
  or the clock it reads. The invariant is that no code of the student's replaces code of anyone
  else's; a program whose symbols cannot be read is a finding too, never a pass;
- the functions its own objects call (`nm -u`: the test's translation unit, the student's headers
  in it) that go around the count of device-to-host copies (`bytes-to-host`, issue 16): the
  driver API, functions looked up at run time, host memory a kernel can write, and copies the
  harness does not count (grader/harness/src/host_traffic_cuda.cpp wraps the ones it counts).
The student's speed program is built without the baselines (kernellab/speed.hpp), so it is held
against the reference's test executables, not against the reference's speed program, which has
CUB in it as a baseline: any CUB in a student's speed program is the student's.
"""

import functools
import platform
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kernellab.cpus import available_cpus
from kernellab.errors import InputError
from kernellab.grading.targets import compiled_in, executable, is_speed_target

LDCONFIG = shutil.which("ldconfig") or "/sbin/ldconfig"
# Symbols of every program that a shared library also defines: the C runtime's start files.
RUNTIME_SYMBOLS = frozenset({"_init", "_fini", "_start", "_end", "_edata", "__bss_start", "__data_start", "data_start",
                             "__dso_handle", "_IO_stdin_used", "__libc_csu_init", "__libc_csu_fini", "main"})

# The copies the harness counts: each `__wrap_<copy>` of kernellab_host_traffic's source, which
# the GPU test executables are linked with (`--wrap`); the CPU backend's runtime counts its own.
# Under the project root that the builds were configured from (not this package's folder: an
# installed kernellab grades a project it does not live in, as Gradescope's image does).
HOST_TRAFFIC_SOURCE = Path("grader/harness/src/host_traffic_cuda.cpp")
# The kernel launches the harness counts (kernellab/launched_threads.hpp), wrapped the same way:
# every other cudaLaunch* of the runtime's (extended, cooperative, per-thread-stream) is a finding.
LAUNCHES_SOURCE = Path("grader/harness/src/launches_cuda.cpp")
UNCOUNTED_LAUNCH = re.compile(r"cudaLaunch(Kernel|Cooperative)\w*")
# Copies that write device memory only: nothing to count. Every other cudaMemcpy* the harness
# does not wrap (from arrays, batches, the per-thread-stream variants) is a finding.
COPIES_TO_DEVICE = frozenset({"cudaMemcpyToSymbol", "cudaMemcpyToSymbolAsync", "cudaMemcpyPeer", "cudaMemcpyPeerAsync"})
# The ways to move device memory to the host, or to compute where the host reads, without a
# counted copy, by the names a program's objects call: each with what it is.
UNCOUNTED_ROUTES = (
    (re.compile(r"cu[A-Z]\w*"), "the CUDA driver API, whose copies the grader does not count"),
    (re.compile(r"dlopen|dlmopen|dlsym|dlvsym|dl_iterate_phdr"), "looks functions up at run time, around the counted copies"),
    (re.compile(r"cudaGetDriverEntryPoint\w*|cudaGetProcAddress\w*|cudaGetFuncBySymbol"),
     "looks CUDA functions up at run time, around the counted copies"),
    (re.compile(r"cudaMallocManaged|cudaHostAlloc|cudaMallocHost|cudaHostRegister|cudaHostGetDevicePointer"),
     "host memory a kernel can write, which moves results to the host without a copy"),
    # A `__managed__` variable: nvcc's host stub registers it, and the host reads it with no copy.
    (re.compile(r"__cudaRegisterManagedVar"), "a __managed__ variable, which the host reads without a copy"),
    (re.compile(r"cudaMemPoolCreate|cudaMallocFromPoolAsync|cudaDeviceSetMemPool"),
     "a memory pool, which may hold host memory a kernel can write"),
    (re.compile(r"cudaMalloc\w*Array"), "a CUDA array, whose copies the grader does not count"),
    (re.compile(r"cudaGraph\w*|cudaStreamBeginCapture\w*"), "a CUDA graph, whose copies replay without a call the grader counts"),
    (re.compile(r"__real_\w+"), "the CUDA runtime's own copy, past the grader's count"),
)


def library_pattern(forbidden: tuple[str, ...]) -> re.Pattern:
    """A forbidden name as a word of a symbol or a path ('cub/...', 'cublas_v2.h', 'thrust::')."""
    return re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, forbidden)) + r")(?![A-Za-z0-9])", re.IGNORECASE)


def symbols_in_binaries(
    build_dir: Path, assignment_id: str, targets: list[str], forbidden: tuple[str, ...], baseline: Path, root: Path
) -> dict[str, tuple[str, ...]]:
    """Per built program, its findings: forbidden libraries it includes or links, clocks it defines,
    calls around the counted copies. `baseline` is the reference's build folder, `root` the project's."""
    pattern = library_pattern(forbidden) if forbidden else None
    tests = [target for target in targets if not is_speed_target(target)]

    def findings_of(target: str) -> tuple[str, ...]:
        program = executable(build_dir, assignment_id, target)
        # The reference's programs this one is held against: its own, or (a speed program) the tests.
        held_against = tests if is_speed_target(target) else [target]
        if not program.is_file():
            return ()
        try:
            names, replaced = _symbols(program, pattern)
            called = _called(build_dir, assignment_id, target)
        except UnreadableProgram as unreadable:
            return (f"the {target} build could not be checked ({unreadable.message}), so it earns nothing",)
        reference_names, reference_replaced = set(), {}
        reached = _forbidden_headers(headers_of(build_dir, assignment_id, target) or set(), pattern)
        for other in held_against:
            more_names, more_replaced = _symbols(executable(baseline, assignment_id, other), pattern)
            reference_names |= more_names
            reference_replaced |= more_replaced
            for word in _forbidden_headers(headers_of(baseline, assignment_id, other) or set(), pattern):
                reached.pop(word, None)
        findings = [f"the {target} build includes {word} ({header}), which this assignment forbids"
                    for word, header in sorted(reached.items())]
        findings += [f"the {target} build links {name}, which this assignment forbids"
                     for name in sorted(names - reference_names)]
        findings += [f"the {target} build defines {_demangled(name)} itself, which replaces {library}'s for the whole "
                     "process: the clock the grader times with and the records the harness writes included"
                     for name, library in sorted(replaced.items()) if name not in reference_replaced]
        reference_calls = set().union(*(_called(baseline, assignment_id, other) for other in held_against))
        findings += [f"the {target} build calls {name}: {why}"
                     for name, why in uncounted_routes(called - reference_calls, root)]
        return tuple(findings)

    # The programs are read by tools in processes of their own: one thread each waits for them.
    with ThreadPoolExecutor(max(1, min(len(targets), available_cpus()))) as pool:
        return {target: found for target, found in zip(targets, pool.map(findings_of, targets)) if found}


class UnreadableProgram(InputError):
    """A built program whose symbols or libraries the grader cannot read: a student's costs its
    task, the reference's makes the grade "not graded"."""


def _stamp(path: Path) -> tuple[str, int, int, int] | tuple[str]:
    """What tells one version of a file from another, for the caches below: every grade of a
    batch reads the same reference programs and dependency logs again, which do not change."""
    try:
        status = path.stat()
    except OSError:
        return (str(path),)
    return (str(path), status.st_ino, status.st_mtime_ns, status.st_size)


def _symbols(program: Path, pattern: re.Pattern | None) -> tuple[set[str], dict[str, str]]:
    """The forbidden names among the program's symbols, and each function or variable it defines
    that a shared library it loads also defines, with that library's name."""
    names, replaced = _symbols_of(_stamp(program), pattern)
    return set(names), dict(replaced)


@functools.lru_cache(maxsize=256)
def _symbols_of(stamp: tuple, pattern: re.Pattern | None) -> tuple[frozenset[str], tuple[tuple[str, str], ...]]:
    program = Path(stamp[0])
    listing = _run_tool(["nm", "-C", str(program)])
    names = {match[1].lower() for match in pattern.finditer(listing)} if pattern else set()
    defined = {line.split()[2] for line in _run_tool(["nm", "--defined-only", "--extern-only", str(program)]).splitlines()
               if len(line.split()) == 3}
    replaced = {}
    for library in _needed_libraries(program):
        for name in (defined - RUNTIME_SYMBOLS) & _exported(library):
            replaced.setdefault(name, Path(library).name)
    return frozenset(names), tuple(replaced.items())


def _run_tool(command: list[str]) -> str:
    if shutil.which(command[0]) is None and not Path(command[0]).is_file():
        raise UnreadableProgram(f"{command[0]} is not installed")
    completed = subprocess.run(command, capture_output=True, text=True, errors="replace")
    if completed.returncode != 0:
        raise UnreadableProgram(f"{' '.join(command[:-1])} failed: {completed.stderr.strip()[:200]}")
    return completed.stdout


def _needed_libraries(program: Path) -> list[str]:
    """The paths of the shared libraries the program names (its DT_NEEDED entries), found as the
    dynamic loader finds them (its cache), without running the program as ldd may."""
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", _run_tool(["readelf", "-d", str(program)]))
    paths = []
    for name in needed:
        path = _loader_cache().get(name)
        if path is None:
            raise UnreadableProgram(f"the library {name} it loads is not in the loader's cache")
        paths.append(path)
    return paths


@functools.cache
def _loader_cache() -> dict[str, str]:
    """libc.so.6 -> /lib/x86_64-linux-gnu/libc.so.6, from `ldconfig -p`: this machine's
    architecture's entry where the cache has one for another too (i386's libc6)."""
    entries = re.findall(r"^\s*(\S+) \(([^)]*)\) => (\S+)$", _run_tool([LDCONFIG, "-p"]), re.MULTILINE)
    machine = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(platform.machine(), platform.machine())
    cache: dict[str, str] = {}
    for name, tags, path in sorted(entries, key=lambda entry: machine not in entry[1]):
        cache.setdefault(name, path)
    return cache


@functools.cache
def _exported(library: str) -> frozenset[str]:
    """The functions and variables a shared library defines for others (its dynamic symbols)."""
    listing = _run_tool(["nm", "-D", "--defined-only", library])
    return frozenset(line.split()[2].split("@")[0] for line in listing.splitlines() if len(line.split()) == 3)


def _demangled(name: str) -> str:
    if not name.startswith("_Z") or shutil.which("c++filt") is None:
        return name
    return subprocess.run(["c++filt", name], capture_output=True, text=True).stdout.strip() or name


def uncounted_routes(called: set[str], root: Path) -> list[tuple[str, str]]:
    """The functions of `called` that go around the count of device-to-host copies, each with why;
    the counted ones are those the harness of the project at `root` wraps."""
    counted = set(re.findall(r"__wrap_(\w+)\(", (root / HOST_TRAFFIC_SOURCE).read_text()))
    counted |= set(re.findall(r"__wrap_(\w+)\(", (root / LAUNCHES_SOURCE).read_text()))
    found = []
    for name in sorted(called):
        route = next((why for pattern, why in UNCOUNTED_ROUTES if pattern.fullmatch(name)), None)
        if route is None and name.startswith("cudaMemcpy") and name not in counted | COPIES_TO_DEVICE:
            route = "a copy the grader does not count"
        if route is None and UNCOUNTED_LAUNCH.fullmatch(name) and name not in counted:
            route = "a kernel launch whose threads the grader does not count"
        if route is not None:
            found.append((name, route))
    return found


def _called(build_dir: Path, assignment_id: str, target: str) -> set[str]:
    """The functions the program's own objects call but do not define (`nm -u`), by name without a
    C++ signature: 'cudaMemcpy' also where the CPU backend's runtime defines it in C++."""
    directory, cmake_target = compiled_in(build_dir, assignment_id, target)
    objects = sorted((directory / "assignments" / assignment_id / "CMakeFiles" / f"{cmake_target}.dir").rglob("*.o"))
    if not objects:  # a program that built has objects: not finding them is no clean bill
        raise UnreadableProgram(f"the objects of {cmake_target} are not in {directory}")
    return set(_called_by(tuple(map(_stamp, objects))))


@functools.lru_cache(maxsize=256)
def _called_by(objects: tuple[tuple, ...]) -> frozenset[str]:
    called = set()
    for line in _run_tool(["nm", "-u", "-C", *(stamp[0] for stamp in objects)]).splitlines():
        if match := re.fullmatch(r"\s+[Uwv] ([\w:]+)\S*.*", line):
            called.add(match[1])
    return frozenset(called)


def headers_of(build_dir: Path, assignment_id: str, target: str) -> set[str] | None:
    """Every header the compilers of `build_dir`'s program `target` read (Ninja's dependency log
    of the folder it was compiled in); None without such a log, or where the log has no entry
    for it (its compile failed): what it read is then unknown."""
    directory, cmake_target = compiled_in(build_dir, assignment_id, target)
    if not (directory / "build.ninja").exists():
        return None
    headers = _dependency_log(_stamp(directory / ".ninja_deps")).get(cmake_target)
    return None if headers is None else set(headers)


@functools.lru_cache(maxsize=64)
def _dependency_log(deps: tuple) -> dict[str, frozenset[str]]:
    """Per CMake target of the build folder of the log `deps` (its stamp), every file its objects'
    compilers read."""
    build_dir = Path(deps[0]).parent
    if shutil.which("ninja") is None:
        raise UnreadableProgram("ninja is not installed, whose log says what each program's compilers read")
    log = subprocess.run(["ninja", "-C", str(build_dir), "-t", "deps"], capture_output=True, text=True, errors="replace")
    headers: dict[str, set[str]] = {}
    target = None
    for line in log.stdout.splitlines():
        if line and not line[0].isspace():
            match = re.search(r"CMakeFiles/([^/]+)\.dir/", line)
            target = match[1] if match else None
            if target:
                headers.setdefault(target, set())  # built, even where it read nothing of interest
        elif target and line.strip():
            headers[target].add(line.strip())
    return {target: frozenset(read) for target, read in headers.items()}


def _forbidden_headers(headers: set[str], pattern: re.Pattern | None) -> dict[str, str]:
    """Each forbidden library among `headers`, with the first of its headers (by path)."""
    reached: dict[str, str] = {}
    if pattern is None:
        return reached
    for header in sorted(headers):
        short = include_name(header)
        if match := pattern.search(short):
            reached.setdefault(match[1].lower(), short)
    return reached


def include_name(header: str) -> str:
    """'cub/device/device_scan.cuh' for a header under an include folder, as an #include names it."""
    if not Path(header).is_absolute():
        return header  # as an #include named it: a header the compiler did not find
    parts = Path(header).parts
    roots = [index for index, part in enumerate(parts) if part in ("include", "cccl")]
    return "/".join(parts[roots[-1] + 1 :]) if roots else Path(header).name
