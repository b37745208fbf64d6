"""Static checks of the built programs: what each one's compiler read and what its linker put in.

Per built program (a test executable, or the speed program), beyond what the same program built
from the reference shows:
- the headers of a forbidden library its objects include, from Ninja's log of the compiler's own
  dependency output (the include graph a macro cannot hide);
- the forbidden names among its symbols (`nm -C`: what the linker pulled in), and the libc clocks
  it defines itself (one would replace the clock of the whole process);
- the functions its own objects call (`nm -u`: the test's translation unit, the student's headers
  in it) that go around the count of device-to-host copies (`bytes-to-host`, issue 16): the
  driver API, functions looked up at run time, host memory a kernel can write, and copies the
  harness does not count (grader/harness/src/host_traffic_cuda.cpp wraps the ones it counts).
The student's speed program is built without the baselines (kernellab/speed.hpp), so it is held
against the reference's test executables, not against the reference's speed program, which has
CUB in it as a baseline: any CUB in a student's speed program is the student's.
"""

import re
import shutil
import subprocess
from pathlib import Path

from kernellab.grading.targets import SPEED_TARGET, executable, target_name

# Functions a program must not define: libc's clocks, which the harness reads. Defined in the
# executable, one replaces libc's for the whole process (the CUDA runtime's own functions need no
# entry: linked statically, a second definition fails to link). Not libstdc++'s clocks: some
# toolchains link libstdc++ statically, so its definitions are there.
DENIED_DEFINITIONS = frozenset({
    "clock_gettime", "__clock_gettime", "__clock_gettime64", "gettimeofday", "time", "clock", "times", "timespec_get",
})

# The copies the harness counts: each `__wrap_<copy>` of kernellab_host_traffic's source, which
# the GPU test executables are linked with (`--wrap`); the CPU backend's runtime counts its own.
# Under the project root that the builds were configured from (not this package's folder: an
# installed kernellab grades a project it does not live in, as Gradescope's image does).
HOST_TRAFFIC_SOURCE = Path("grader/harness/src/host_traffic_cuda.cpp")
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
    headers = _headers_by_target(build_dir)
    reference_headers = _headers_by_target(baseline)
    tests = [target for target in targets if target != SPEED_TARGET]
    found: dict[str, tuple[str, ...]] = {}
    for target in targets:
        program = executable(build_dir, assignment_id, target)
        # The reference's programs this one is held against: its own, or (the speed program) the tests.
        held_against = tests if target == SPEED_TARGET else [target]
        names, defined = _symbols(program, pattern)
        reference_names, reference_defined = set(), set()
        reached = _forbidden_headers(headers.get(program.name, set()), pattern)
        for other in held_against:
            other_program = executable(baseline, assignment_id, other)
            more_names, more_defined = _symbols(other_program, pattern)
            reference_names |= more_names
            reference_defined |= more_defined
            for word in _forbidden_headers(reference_headers.get(other_program.name, set()), pattern):
                reached.pop(word, None)
        findings = [f"the {target} build includes {word} ({header}), which this assignment forbids"
                    for word, header in sorted(reached.items())]
        findings += [f"the {target} build links {name}, which this assignment forbids"
                     for name in sorted(names - reference_names)]
        findings += [f"the {target} build defines {name} itself, which would replace the clock the grader times with"
                     for name in sorted(defined - reference_defined)]
        reference_calls = set().union(*(_called(baseline, assignment_id, other) for other in held_against))
        findings += [f"the {target} build calls {name}: {why}"
                     for name, why in uncounted_routes(_called(build_dir, assignment_id, target) - reference_calls, root)]
        if findings:
            found[target] = tuple(findings)
    return found


def _symbols(program: Path, pattern: re.Pattern | None) -> tuple[set[str], set[str]]:
    """The forbidden names among the program's symbols, and the denied functions it defines."""
    if not program.is_file() or shutil.which("nm") is None:
        return set(), set()
    listing = subprocess.run(["nm", "-C", str(program)], capture_output=True, text=True, errors="replace").stdout
    names = {match[1].lower() for match in pattern.finditer(listing)} if pattern else set()
    defined = {line.split(" ", 2)[2] for line in listing.splitlines() if re.match(r"\S+ [TWDBRV] ", line)}
    return names, DENIED_DEFINITIONS & defined


def uncounted_routes(called: set[str], root: Path) -> list[tuple[str, str]]:
    """The functions of `called` that go around the count of device-to-host copies, each with why;
    the counted ones are those the harness of the project at `root` wraps."""
    counted = set(re.findall(r"__wrap_(\w+)\(", (root / HOST_TRAFFIC_SOURCE).read_text()))
    found = []
    for name in sorted(called):
        route = next((why for pattern, why in UNCOUNTED_ROUTES if pattern.fullmatch(name)), None)
        if route is None and name.startswith("cudaMemcpy") and name not in counted | COPIES_TO_DEVICE:
            route = "a copy the grader does not count"
        if route is not None:
            found.append((name, route))
    return found


def _called(build_dir: Path, assignment_id: str, target: str) -> set[str]:
    """The functions the program's own objects call but do not define (`nm -u`), by name without a
    C++ signature: 'cudaMemcpy' also where the CPU backend's runtime defines it in C++."""
    target_dir = build_dir / "assignments" / assignment_id / "CMakeFiles" / f"{target_name(assignment_id, target)}.dir"
    objects = sorted(target_dir.rglob("*.o"))
    if not objects or shutil.which("nm") is None:
        return set()
    listing = subprocess.run(["nm", "-u", "-C", *map(str, objects)], capture_output=True, text=True, errors="replace").stdout
    called = set()
    for line in listing.splitlines():
        if match := re.fullmatch(r"\s+[Uwv] ([\w:]+)\S*.*", line):
            called.add(match[1])
    return called


def _headers_by_target(build_dir: Path) -> dict[str, set[str]]:
    """Per CMake target, every header its objects' compilers read (Ninja's dependency log)."""
    if not (build_dir / "build.ninja").exists() or shutil.which("ninja") is None:
        return {}
    log = subprocess.run(["ninja", "-C", str(build_dir), "-t", "deps"], capture_output=True, text=True, errors="replace")
    headers: dict[str, set[str]] = {}
    target = None
    for line in log.stdout.splitlines():
        if line and not line[0].isspace():
            match = re.search(r"CMakeFiles/([^/]+)\.dir/", line)
            target = match[1] if match else None
        elif target and line.strip():
            headers.setdefault(target, set()).add(line.strip())
    return headers


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
