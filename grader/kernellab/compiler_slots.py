"""The compilers that run at once on this machine, however many builds and grading runs go on.

Each compiler of a grader's build starts through a launcher: the one CMake puts in front of it
(CMAKE_<LANG>_COMPILER_LAUNCHER) in a build without a compile cache, else the one ccache puts in
front of what it runs (CCACHE_PREFIX, compile_cache.py), so that an object found in the cache
takes no slot. The launcher takes one of the machine's slots, a lock on one of the slot files of
a folder, and runs the compiler holding it.
The kernel ends the lock with the compiler, however it ends, killed included, so no slot is ever
lost. A slot per core: a compiler is a CPU-bound process, and tests running beside the builds need
the cores that compilers waiting for a slot leave.

Slots per build instead of per compiler held the cores back: a build holds its `-j` for its whole
time, configuring and linking included, so a batch of sixteen grades on an H100 host (16 cores)
ran about ten compilers at once with every grade's build waiting for slots (docs/performance.md).

The folder is the machine's (one per user, in the temporary folder), bound read-only into each
build's sandbox: a build can take a slot, as its compilers must, and write nothing there.
"""

import os
import shutil
import stat
import tempfile
from pathlib import Path

from kernellab.cpus import available_cpus

LAUNCHER = "compile-in-a-slot"

# The launcher (POSIX sh): it tries each slot once from one chosen by its process id, then waits
# for that one. The compiler is exec'd inside the group whose redirection holds the locked
# descriptor, so it keeps the lock; a slot file it cannot read (a step's uid without the right)
# costs the compiler its slot, never its build.
_LAUNCHER_SCRIPT = """\
#!/bin/sh
# A compiler of kernellab's builds, run holding one of this folder's {count} slots
# (grader/kernellab/compiler_slots.py); the lock ends with the compiler.
slots=${{0%/*}}
first=$(( $$ % {count} ))
slot=$first
while :; do
    [ -r "$slots/slot-$slot" ] && {{ {flock} -n 9 && exec "$@"; }} 9<"$slots/slot-$slot"
    slot=$(( (slot + 1) % {count} ))
    [ "$slot" -eq "$first" ] && break
done
[ -r "$slots/slot-$first" ] && {{ {flock} 9; exec "$@"; }} 9<"$slots/slot-$first"
exec "$@"
"""


def prepare(folder: Path, count: int) -> Path | None:
    """`folder` with `count` slot files and the launcher that takes one, whose path is returned;
    None where `flock` is missing or the folder is not this user's alone to write (another
    user's folder of that name in a shared temporary folder), and the builds then run as many
    compilers as their `-j` says."""
    flock = shutil.which("flock")
    if flock is None:
        return None
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    status = folder.lstat()
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid() or status.st_mode & 0o022:
        return None
    # Readable by a build step's own uid (the container sandbox) whatever the grader's umask.
    folder.chmod(0o755)
    for slot in range(count):
        (folder / f"slot-{slot}").touch()
        (folder / f"slot-{slot}").chmod(0o644)
    launcher = folder / LAUNCHER
    script = _LAUNCHER_SCRIPT.format(count=count, flock=flock)
    if not launcher.is_file() or launcher.read_text() != script:
        # Written whole, closed and then renamed: a build of another grading run may be starting it.
        descriptor, written = tempfile.mkstemp(dir=folder, prefix=f".{LAUNCHER}-")
        with os.fdopen(descriptor, "w") as file:
            file.write(script)
        os.chmod(written, 0o755)
        os.replace(written, launcher)
    return launcher


def launcher() -> Path | None:
    """The launcher of this machine's slots, one per core available to the grader, prepared again
    at each call (a few system calls): a grader that serves for weeks outlives what a cleaner of
    the temporary folder removes. None without one (prepare)."""
    return prepare(Path(tempfile.gettempdir()) / f"kernellab-compiler-slots-{os.getuid()}", available_cpus())
