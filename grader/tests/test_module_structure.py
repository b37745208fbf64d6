"""How the grader's modules depend on each other: each in a declared layer, importing only from its
own layer and those below (the model at the bottom, the commands on top), no import circle, commands
that import no other command and that no library module imports, and modules short enough to read
(docs/architecture.md)."""

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kernellab
from kernellab import PACKAGE_PARENT

PACKAGE = Path(__file__).resolve().parents[1] / "kernellab"
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py")) if "templates" not in path.parts}


def imported_names(module: str) -> set[str]:
    """What `module` imports, wherever in it (a function's import counts too), as module names:
    `from kernellab.grading import reference` imports kernellab.grading.reference where that is a
    module, `from kernellab.grading.run import GradingRun` the module kernellab.grading.run."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from kernellab import x`: x is a module (or the root's own __version__).
            found |= {f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in MODULES
                      or (node.module == "kernellab" and alias.name != "__version__") else node.module
                      for alias in node.names}
    return found


def imports_of(module: str) -> set[str]:
    """The kernellab modules `module` imports."""
    return {name for name in imported_names(module) if name in MODULES and name != module}


GRAPH = {module: imports_of(module) for module in MODULES}


def missing_imports(module: str) -> set[str]:
    """The kernellab modules `module` imports that the package does not hold: an import left
    behind by a move (an installed kernellab elsewhere could still answer it)."""
    return {name for name in imported_names(module)
            if name.split(".")[0] == "kernellab" and name not in MODULES and not _is_package_attribute(name)}


def _is_package_attribute(name: str) -> bool:
    """Whether `name` is a name a module of the package defines (`from kernellab import PACKAGE_PARENT`)."""
    holder, _, attribute = name.rpartition(".")
    return holder in MODULES and hasattr(importlib.import_module(holder), attribute)

# The layers, bottom first: a module imports from its own layer and those below, never from one
# above. A name stands for the module or the package it names, the longest that fits deciding (the
# root package `kernellab` stands for its own __init__ only). A new module must be placed here.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the model: words, records, the manifest, the result", (
        "kernellab", "kernellab.errors", "kernellab.text", "kernellab.table", "kernellab.verdict", "kernellab.records",
        "kernellab.judge", "kernellab.backend", "kernellab.cpus", "kernellab.deadline", "kernellab.gpu_memory",
        "kernellab.stopping", "kernellab.environment", "kernellab.junit", "kernellab.applicability",
        "kernellab.manifest", "kernellab.manifest_fields", "kernellab.manifest_tasks", "kernellab.manifest_cmake",
        "kernellab.markers", "kernellab.patches", "kernellab.grading.model")),
    ("the sandbox and the runs in it", ("kernellab.sandbox", "kernellab.runner")),
    ("builds and the checks of student code", (
        "kernellab.cmake", "kernellab.compiler_slots", "kernellab.compile_cache", "kernellab.grading.targets", "kernellab.binary_checks", "kernellab.static_checks",
        "kernellab.compiled_checks", "kernellab.intake", "kernellab.properties", "kernellab.solution")),
    ("the stages of a grade, each with its internals, and what they share", ("kernellab.grading",)),
    ("the pipeline and the other verbs' libraries", (
        "kernellab.grading.pipeline", "kernellab.grading.start", "kernellab.batch", "kernellab.serve", "kernellab.slurm",
        "kernellab.remote", "kernellab.reports", "kernellab.console", "kernellab.coverage", "kernellab.summary",
        "kernellab.gradebook", "kernellab.speed_table", "kernellab.options", "kernellab.public_tests", "kernellab.calibrate",
        "kernellab.known_wrong", "kernellab.release_check", "kernellab.skeleton", "kernellab.scaffold",
        "kernellab.bundle", "kernellab.grader_bundle", "kernellab.export_gradescope", "kernellab.export_prairielearn")),
    ("the commands", ("kernellab.commands", "kernellab.cli", "kernellab.__main__", "kernellab.student")),
)


def layer_of(module: str, layers=LAYERS) -> int | None:
    """The index of `module`'s layer in `layers`, by the longest declared name that is the module or
    a package holding it; None when none is."""
    declared = {name: index for index, (_, names) in enumerate(layers) for name in names}
    parts = module.split(".")
    for length in range(len(parts), 1, -1):  # never the root package alone: it holds every module
        if (prefix := ".".join(parts[:length])) in declared:
            return declared[prefix]
    return declared.get(module)


def upward_imports(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """Each import from a layer above the importing module's, as "module -> imported"."""
    return [f"{module} -> {imported}" for module in sorted(graph) for imported in sorted(graph[module])
            if layer_of(imported, layers) > layer_of(module, layers)]


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as the list of its modules, the first repeated at the end; None without."""
    state: dict[str, str] = {}  # "open" while its imports are being walked, then "done"
    path: list[str] = []

    def walk(module: str) -> list[str] | None:
        state[module] = "open"
        path.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return path[path.index(imported):] + [imported]
            if imported not in state and (circle := walk(imported)):
                return circle
        path.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state and (circle := walk(module)):
            return circle
    return None


def test_the_walk_finds_a_circle_and_only_a_circle():
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    assert "kernellab.grading.reference" in GRAPH["kernellab.grading.groups"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_kernellab_import_names_a_module_of_the_package(module):
    assert not missing_imports(module), module


def test_every_module_has_a_layer():
    assert not [module for module in MODULES if layer_of(module) is None]


def test_the_direction_check_finds_an_import_from_above():
    # A synthetic package: its model imports its stage (upward), its stage imports its model (down).
    layers = (("model", ("p", "p.model")), ("stages", ("p.stages",)), ("commands", ("p.cli",)))
    graph = {"p.model": {"p.stages.race.check"}, "p.stages.race.check": {"p.model"}, "p.cli": {"p.stages"}, "p": set()}
    assert upward_imports(graph, layers) == ["p.model -> p.stages.race.check"]
    assert layer_of("p.stages.race.check", layers) == 1 and layer_of("p", layers) == 0 and layer_of("p.other", layers) is None
    assert upward_imports({**graph, "p.model": set()}, layers) == []


def test_no_module_imports_from_a_layer_above_its_own():
    assert not upward_imports(GRAPH), "\n".join(upward_imports(GRAPH))


def test_no_module_imports_itself_through_others():
    circle = find_circle(GRAPH)
    assert circle is None, "import circle: " + " -> ".join(circle or [])


@pytest.mark.parametrize("command", sorted(name for name in MODULES if name.startswith("kernellab.commands.")))
def test_a_command_imports_no_other_command(command):
    assert not {name for name in GRAPH[command] if name.startswith("kernellab.commands")}, command


def test_no_library_module_imports_a_command():
    libraries = [name for name in MODULES if not name.startswith("kernellab.commands") and name != "kernellab.cli"
                 and name != "kernellab.student"]
    offenders = {name: sorted(GRAPH[name]) for name in libraries if any(i.startswith("kernellab.commands") for i in GRAPH[name])}
    assert not offenders


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_longer_than_the_limit(module):
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[module]}: {lines} lines"


def test_the_students_launcher_imports_the_standard_library_alone():
    # The handout runs `python3 -S -m kernellab.student` (bundle.py): no site-packages, so no numpy.
    # Seen when the speed stage's timing, which `kernellab test` reads, came to import the judge.
    grader = Path(__file__).resolve().parents[1]
    imported = subprocess.run([sys.executable, "-S", "-c", "import kernellab.student"], capture_output=True, text=True,
                              env={"PYTHONPATH": str(grader), "PATH": os.environ.get("PATH", "")})
    assert imported.returncode == 0, imported.stderr


def test_the_grader_s_child_processes_import_this_very_package():
    # The speed clock's process got `parents[1]` of its own file as PYTHONPATH, right until the
    # file moved a level down: on a machine without an installed kernellab every GPU grade was
    # "not graded" (the clock could not start), while an editable install hid it here.
    assert (PACKAGE_PARENT / "kernellab" / "__init__.py").samefile(kernellab.__file__)
