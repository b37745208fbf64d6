"""A real single-node Slurm cluster for the tests: munged, slurmctld and slurmd from Debian's
`munge`, `slurmctld`, `slurmd` and `slurm-client` packages, started on loopback with a generated
slurm.conf in a temporary folder (free ports, no system file touched) and stopped at the end."""

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

PROGRAMS = ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel")
PACKAGES = "munge slurmctld slurmd slurm-client"
NODE = "kernellab-node"
PARTITION = "grading"


def unavailable() -> str:
    """Why no cluster can be started here, or '' when one can."""
    missing = [program for program in PROGRAMS if shutil.which(program) is None and not Path("/usr/sbin", program).exists()]
    if missing:
        return f"no {', '.join(missing)}: install Debian's {PACKAGES} (apt-get install {PACKAGES})"
    if os.geteuid() != 0:
        return "slurmd runs jobs as their submitting user only when started as root"
    return ""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _program(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


class LocalSlurm:
    """Start with `with LocalSlurm(folder) as cluster:`; `cluster.environment` points the Slurm
    commands at it (SLURM_CONF)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.conf = folder / "slurm.conf"
        self.munge_socket = folder / "munge" / "munge.socket"
        self.environment = {**os.environ, "SLURM_CONF": str(self.conf)}
        self._daemons: list[subprocess.Popen] = []

    def __enter__(self) -> "LocalSlurm":
        munge = self.folder / "munge"
        munge.mkdir(parents=True, mode=0o700)
        for name in ("state", "spool"):
            (self.folder / name).mkdir()
        subprocess.run([_program("mungekey"), "--create", f"--keyfile={munge / 'munge.key'}"], check=True)
        try:
            self._start([_program("munged"), "--foreground", "--force", f"--key-file={munge / 'munge.key'}",
                         f"--socket={self.munge_socket}", f"--pid-file={munge / 'munged.pid'}",
                         f"--log-file={munge / 'munged.log'}", f"--seed-file={munge / 'munged.seed'}"], "munged")
            self._wait(lambda: self.munge_socket.exists(), "munged's socket")
            self.conf.write_text(self._configuration())
            self._start([_program("slurmctld"), "-D", "-f", str(self.conf)], "slurmctld")
            self._start([_program("slurmd"), "-D", "-N", NODE, "-f", str(self.conf)], "slurmd")
            self._wait(self._node_idle, f"node {NODE} idle")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _configuration(self) -> str:
        folder = self.folder
        cores = os.cpu_count() or 1
        return "\n".join([
            "ClusterName=kernellab-test",
            f"SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={folder / 'state'}",
            f"SlurmdSpoolDir={folder / 'spool'}",
            f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
            f"SlurmdPidFile={folder / 'slurmd.pid'}",
            f"SlurmctldLogFile={folder / 'slurmctld.log'}",
            f"SlurmdLogFile={folder / 'slurmd.log'}",
            "MailProg=/bin/true",
            "MpiDefault=none",
            "ProctrackType=proctrack/pgid",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "ReturnToService=2",
            "SchedulerParameters=sched_interval=1",
            f"NodeName={NODE} NodeHostname={socket.gethostname().split('.')[0]} NodeAddr=127.0.0.1 CPUs={cores} State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
        ]) + "\n"

    def _start(self, command: list[str], name: str) -> None:
        log = open(self.folder / f"{name}.out", "wb")
        self._daemons.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=self.environment))

    def _node_idle(self) -> bool:
        shown = subprocess.run(["sinfo", "-h", "-n", NODE, "-o", "%t"], capture_output=True, text=True, env=self.environment)
        return shown.stdout.strip() == "idle"

    def _wait(self, ready, what: str, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while not ready():
            exited = [daemon for daemon in self._daemons if daemon.poll() is not None]
            if exited or time.monotonic() > deadline:
                raise RuntimeError(f"the test cluster did not come up ({what}); logs: {self.logs()}")
            time.sleep(0.5)

    def wait_idle(self, timeout_s: float) -> None:
        """Wait until no job is queued or running."""
        def empty() -> bool:
            queue = subprocess.run(["squeue", "-h"], capture_output=True, text=True, env=self.environment)
            return queue.returncode == 0 and not queue.stdout.strip()

        self._wait(empty, f"every job ended within {timeout_s:g} s", timeout_s)

    def logs(self) -> str:
        return "\n".join(f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
                         for path in sorted(self.folder.glob("*.out")) + sorted(self.folder.glob("*.log")))

    def __exit__(self, *_exception) -> None:
        if len(self._daemons) == 3:  # the jobs a failed test left behind must not grade on
            subprocess.run(["scancel", "--partition", PARTITION], env=self.environment, capture_output=True)
            try:
                self.wait_idle(60)
            except RuntimeError:
                pass
        for daemon in reversed(self._daemons):
            daemon.terminate()
        for daemon in reversed(self._daemons):
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
