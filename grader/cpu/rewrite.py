#!/usr/bin/env python3
"""The source rewrite of kernellab's CPU backend: what no C++ macro can do before g++ sees a
CUDA source.

- `kernel<A, B><<<grid, block, shmem, stream>>>(args)` becomes a call of
  `::kernellab::cpu::Launch` (grader/cpu/include/kernellab_cpu/launch.hpp);
- `__shared__ T name[N];` becomes a reference to the block's copy of that variable, and
  `extern __shared__ T name[];` a pointer to the block's dynamic shared memory;
- constructs the backend cannot run (inline PTX, textures, grid-wide sync, coalesced groups,
  clusters, dynamic parallelism, `__shared__` outside a function) stop the build with the file
  and line.

Every line stays where it was and each output starts with `#line 1 "<original>"`, so
compiler messages and the backend's findings name the student's own file and line.

    rewrite.py SOURCE_DIR OUTPUT_DIR     rewrites the sources directly in SOURCE_DIR
"""

import re
import sys
from dataclasses import dataclass
from pathlib import Path

SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".inl", ".cpp", ".cc", ".cxx")

UNSUPPORTED = [
    (re.compile(r"\b(?:asm|__asm__)\s*(?:volatile\s*|__volatile__\s*)?\("), "inline PTX (asm)"),
    (re.compile(r"\b(?:tex[123]D\w*|tex1Dfetch|texture\s*<|cudaTextureObject_t|surf[123]D\w*)"), "textures and surfaces"),
    (re.compile(r"\b(?:this_grid\s*\(|grid_group\b|cudaLaunchCooperativeKernel\b)"), "grid-wide synchronization"),
    # The backend's cooperative_groups.h has blocks and tiles; a coalesced group is the lanes that a
    # GPU runs together at that point, which fibers have no notion of.
    (re.compile(r"\b(?:coalesced_threads\s*\(|coalesced_group\b|labeled_partition\s*\(|binary_partition\s*\()"),
     "coalesced groups (coalesced_threads, labeled_partition, binary_partition)"),
    (re.compile(r"\b(?:this_cluster\s*\(|cluster_group\b)"), "thread block clusters"),
]
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


class RewriteError(Exception):
    pass


def mask(text: str) -> str:
    """`text` with comments and the insides of string and character literals blanked
    (newlines kept), so that searches only see code."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for j in range(i, end):
                if text[j] != "\n":
                    out[j] = " "
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and (text[i - 1].isalnum()):
                i += 1  # a digit separator such as 1'000
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                if text[j] == "\\":
                    out[j] = " "
                    j += 1
                out[j] = " "
                j += 1
            i = j + 1
        else:
            i += 1
    return "".join(out)


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def matching(masked: str, start: int, open_char: str, close_char: str) -> int:
    """Index of the bracket that closes the one at `start`."""
    depth = 0
    for i in range(start, len(masked)):
        if masked[i] == open_char:
            depth += 1
        elif masked[i] == close_char:
            depth -= 1
            if depth == 0:
                return i
    raise RewriteError(f"unbalanced '{open_char}'")


@dataclass
class Scope:
    kind: str  # "namespace", "class" or "code"
    device: bool  # inside a __global__ or __device__ function


def scope_stack(masked: str, index: int) -> list[Scope]:
    """The braces that enclose `index`, innermost last."""
    stack: list[Scope] = []
    for match in re.finditer(r"[{}]", masked[:index]):
        if match.group() == "}":
            if stack:
                stack.pop()
            continue
        head_start = max(masked.rfind(";", 0, match.start()), masked.rfind("}", 0, match.start()),
                         masked.rfind("{", 0, match.start())) + 1
        head = masked[head_start:match.start()]
        if re.search(r"\bnamespace\b[\w\s:]*$", head) or re.search(r"\bextern\s*\"\s*\"\s*$", head):
            kind = "namespace"
        elif re.search(r"\b(?:struct|class|union|enum)\b[^()]*$", head):
            kind = "class"
        else:
            kind = "code"
        outer_device = bool(stack) and stack[-1].device
        device = outer_device or (kind == "code" and re.search(r"\b__(?:global|device)__\b", head) is not None
                                  and re.search(r"\b__host__\b", head) is None)
        stack.append(Scope(kind, device))
    return stack


def launch_replacement(text: str, masked: str, start: int) -> tuple[int, int, str]:
    """The launch whose `<<<` is at `start`: (first index, end index, replacement)."""
    config_end = masked.find(">>>", start)
    if config_end < 0:
        raise RewriteError("'<<<' without '>>>'")
    args_open = config_end + 3
    while args_open < len(masked) and masked[args_open].isspace():
        args_open += 1
    if args_open >= len(masked) or masked[args_open] != "(":
        raise RewriteError("a launch needs its arguments in parentheses after '>>>'")
    args_close = matching(masked, args_open, "(", ")")

    name_end = start
    while name_end > 0 and masked[name_end - 1].isspace():
        name_end -= 1
    name_start = name_end
    if masked[name_start - 1] == ">":
        depth = 0
        while name_start > 0:
            name_start -= 1
            if masked[name_start] == ">":
                depth += 1
            elif masked[name_start] == "<":
                depth -= 1
                if depth == 0:
                    break
    while name_start > 0 and (masked[name_start - 1].isalnum() or masked[name_start - 1] in "_:"):
        name_start -= 1
    name = text[name_start:name_end]
    if not IDENTIFIER.match(name.lstrip(":")):
        raise RewriteError("cannot tell which kernel this launch calls")

    config = text[start + 3:config_end]
    arguments = text[args_open + 1:args_close]

    def literal(s: str) -> str:
        return '"' + " ".join(s.split()).replace("\\", "\\\\").replace('"', '\\"') + '"'

    replacement = (f"::kernellab::cpu::Launch(KL_CPU_SITE, {literal(name)}, {literal(arguments)}, "
                   f"[&](auto&&... kl_cpu_arguments) {{ {name}(kl_cpu_arguments...); }}, {config})({arguments})")
    missing = text.count("\n", name_start, args_close + 1) - replacement.count("\n")
    return name_start, args_close + 1, replacement + "\n" * missing


def shared_replacement(text: str, masked: str, start: int) -> tuple[int, int, str]:
    """The `__shared__` declaration whose keyword is at `start`."""
    statement_start = max(masked.rfind(";", 0, start), masked.rfind("{", 0, start), masked.rfind("}", 0, start)) + 1
    while masked[statement_start].isspace():
        statement_start += 1
    end = masked.find(";", start)
    if end < 0:
        raise RewriteError("a __shared__ declaration without ';'")
    prefix = masked[statement_start:start].split()
    declaration = " ".join(masked[start + len("__shared__"):end].split())
    extern = "extern" in prefix
    qualifiers = " ".join(word for word in prefix if word in ("volatile", "const"))
    unknown = [word for word in prefix if word not in ("extern", "static", "volatile", "const")]
    if unknown:
        raise RewriteError(f"cannot read this __shared__ declaration (what is '{' '.join(unknown)}'?)")
    if "=" in declaration:
        raise RewriteError("a __shared__ variable cannot have an initializer")
    dims_match = re.search(r"(\s*\[[^\[\]]*\])+$", declaration)
    dims = dims_match.group().replace(" ", "") if dims_match else ""
    head = declaration[:dims_match.start()] if dims_match else declaration
    name_match = re.search(r"([A-Za-z_]\w*)\s*$", head)
    type_text = head[:name_match.start()].strip() if name_match else ""
    if not name_match or not type_text or "," in declaration.replace(dims, ""):
        raise RewriteError("declare one __shared__ variable per statement: 'T name[...];'")
    name = name_match.group(1)
    type_text = f"{qualifiers} {type_text}".strip()
    if extern:
        if dims != "[]":
            raise RewriteError("'extern __shared__' declares an array of unknown size: 'extern __shared__ T name[];'")
        replacement = f"{type_text}* const {name} = static_cast<{type_text}*>(::kernellab::cpu::dynamicShared());"
    else:
        if "[]" in dims:
            raise RewriteError("a static __shared__ array needs its size (or 'extern' for dynamic shared memory)")
        reference = f"(&{name}){dims}" if dims else f"&{name}"
        replacement = (f"{type_text} {reference} = "
                       f"::kernellab::cpu::staticSharedVariable<{type_text}{dims}>([] {{}});")
    missing = text.count("\n", statement_start, end + 1) - replacement.count("\n")
    return statement_start, end + 1, replacement + "\n" * missing


def rewrite(text: str, path: str) -> str:
    """The CPU-backend version of one source; raises RewriteError naming every problem."""
    masked = mask(text)
    errors: list[str] = []
    edits: list[tuple[int, int, str]] = []

    def error(index: int, message: str) -> None:
        errors.append(f"{path}:{line_of(text, index)}: error: kernellab CPU backend: {message}")

    for pattern, what in UNSUPPORTED:
        for match in pattern.finditer(masked):
            error(match.start(), f"{what} cannot run on the CPU backend; this code needs a GPU")
    for match in re.finditer(r"<<<", masked):
        try:
            if any(scope.device for scope in scope_stack(masked, match.start())):
                raise RewriteError("a launch from device code (dynamic parallelism) cannot run on the CPU backend")
            edits.append(launch_replacement(text, masked, match.start()))
        except RewriteError as problem:
            error(match.start(), str(problem))
    for match in re.finditer(r"\b__shared__\b", masked):
        try:
            if not any(scope.kind == "code" for scope in scope_stack(masked, match.start())):
                raise RewriteError("__shared__ outside a function is not supported: declare it inside the kernel")
            edits.append(shared_replacement(text, masked, match.start()))
        except RewriteError as problem:
            error(match.start(), str(problem))
    if errors:
        raise RewriteError("\n".join(errors))

    out = []
    position = 0
    for start, end, replacement in sorted(edits):
        if start < position:
            raise RewriteError(f"{path}:{line_of(text, start)}: error: kernellab CPU backend: overlapping constructs")
        out.append(text[position:start])
        out.append(replacement)
        position = end
    out.append(text[position:])
    escaped = path.replace("\\", "\\\\").replace('"', '\\"')
    return f'#line 1 "{escaped}"\n' + "".join(out)


def rewrite_directory(source: Path, output: Path) -> list[str]:
    errors = []
    output.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        if not path.is_file() or not path.name.endswith(SOURCE_SUFFIXES):
            continue
        try:
            rewritten = rewrite(path.read_text(encoding="utf-8", errors="replace"), str(path.resolve()))
        except RewriteError as problem:
            errors.append(str(problem))
            continue
        (output / path.name).write_text(rewritten, encoding="utf-8")
    return errors


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    errors = rewrite_directory(Path(argv[1]), Path(argv[2]))
    for message in errors:
        print(message, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
