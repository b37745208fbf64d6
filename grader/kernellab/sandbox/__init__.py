"""The sandbox around student code, and the limits put on it from outside.

Student code runs in two kinds of steps: the build (compilers on the student's sources) and each
run of a test, speed or sanitizer program. Each step runs in a fresh bubblewrap sandbox: new
user, mount, pid, network, IPC and UTS namespaces (so no network, and every process it starts
dies with it), uid 65534 inside, a read-only view of the system directories and of only the
paths the step needs, a fresh size-limited tmpfs as /tmp, and the step's own outputs as the only
writable places. The reference, its records, the hidden seed's records, other students' jobs and
the grader's state are simply not in the view, at compile time (`#include "/abs/path"`,
`.incbin`) as at run time. Inside a platform's container, where bubblewrap cannot run, the
weaker container sandbox takes its place (container.py says what it can and cannot do).

Limits come from outside the sandbox, where student code cannot lift them: the wall clock
(runner.py kills the whole process tree), memory and process count through a cgroup per step
(cgroup v2, or v1's memory and pids controllers) where the grader may create one, otherwise
RLIMIT_DATA and RLIMIT_NPROC; the size of any file written (RLIMIT_FSIZE), no core files, and
the output kept (runner.py). Not RLIMIT_AS: an address-space limit of 8 GiB or less makes CUDA
fail on the H100 machines, whose driver reserves address space it never touches. A run of a test
or speed program ends as soon as its cgroup hits a limit: that decides its verdict, and a fork
bomb left at its process limit until the wall clock stops it keeps every core busy failing
forks, starving the runs beside it.

The modules, each with one job (import from them: this file loads none):
- step.py: what one step sees and may use (`Step`, `build_step`, `run_step`), a step ready to
  start (`Confined`), and the sandbox's two failures;
- limits.py: the limits a step's processes carry from fork to exec (rlimits, a uid of its own);
- cgroups.py: a cgroup per step: its limits, what it hit, and the watch that ends it there;
- bubblewrap.py: the bubblewrap sandbox (`Sandbox`): its command line, staging, `machine_sandbox`;
- container.py: the container sandbox (`ContainerSandbox`), without namespaces;
- choice.py: the sandbox the TA's `--sandbox` names, proven to work here.
"""
