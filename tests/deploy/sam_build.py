"""``sam build`` for tests/deploy/test_tools.py::test_sam_build, started in the background as soon
as the run knows it will need it, with the functions' dependencies kept across runs in the clone.

The build is mostly waiting: pip fetching arm64 wheels for four functions from the package index.
Run inside the test it held the whole suite up for a minute or more; started when collection
finishes, at low priority, it overlaps the tests that come before it, and the test waits for what
is left. Which process starts it:

- a plain run: the test process, when its collection holds the test (tests/deploy/conftest.py);
- a parallel run (pytest-xdist): the controlling process, once the workers have collected
  (tests/conftest.py). Every worker collects the whole suite, and only one build must run; the
  worker that is given the test waits for that build through its folder (``returncode`` appears
  there when it ends). The controller outlives every worker, so the build is never stopped under
  a worker still waiting for it.

The dependencies: each function's requirements (infra/requirements-KIND.txt) are downloaded once
as the same wheels the build installs (arm64, CPython 3.12, manylinux up to 2_34) into
``.test-cache/sam-wheels/KEY`` in the clone (git ignores it; KEY is a hash of the requirements
files and the platform, so changing a requirement downloads anew). ``sam build`` then runs with
``PIP_FIND_LINKS`` at that folder and ``PIP_NO_INDEX``: infra/build_function.sh's own pip command
installs from it without asking the index. If the download fails, the build asks the index as it
always did. The build command, the template, the Makefile and every assertion on the result are
the test's own, unchanged.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.support.aws import REPO_ROOT, TEMPLATE_PATH

CACHE = REPO_ROOT / ".test-cache" / "sam-wheels"
KINDS = ("mcp", "api", "notifier", "sweeper")
# As infra/build_function.sh installs them: Lambda's python3.12 on Amazon Linux 2023, arm64.
PLATFORM = ["--implementation", "cp", "--python-version", "3.12", "--only-binary=:all:",
            "--platform", "manylinux_2_34_aarch64", "--platform", "manylinux_2_28_aarch64",
            "--platform", "manylinux_2_17_aarch64", "--platform", "manylinux2014_aarch64"]


def python312() -> str | None:
    """A working python3.12: on PATH, else (for pyenv machines whose shim is not selected) from pyenv."""
    candidates = [shutil.which("python3.12")]
    roots = [os.environ.get("PYENV_ROOT"), str(Path.home() / ".pyenv")]
    for root in filter(None, roots):
        candidates += sorted(glob.glob(os.path.join(root, "versions", "3.12*", "bin", "python3.12")), reverse=True)
    for candidate in filter(None, candidates):
        try:
            ok = subprocess.run([candidate, "-c", "import sys; assert sys.version_info[:2] == (3, 12)"],
                                capture_output=True, timeout=30).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            return candidate
    return None


def requirements(kind: str) -> Path:
    return REPO_ROOT / "infra" / f"requirements-{kind}.txt"


def source_only_pins() -> set[str]:
    """The pins (``name==version``) of the functions' requirements published only as source
    (infra/source-only.txt), which the build makes into wheels itself."""
    names = {line.strip().lower() for line in (REPO_ROOT / "infra" / "source-only.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")}
    return {line.strip() for kind in KINDS for line in requirements(kind).read_text().splitlines()
            if line.split("==")[0].strip().lower() in names}


def wheelhouse_key() -> str:
    digest = hashlib.sha256(" ".join(PLATFORM).encode() + (REPO_ROOT / "infra" / "source-only.txt").read_bytes())
    for kind in KINDS:
        digest.update(kind.encode() + b"\0" + requirements(kind).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def wheelhouse(python: str, log) -> Path | None:
    """The folder of every function's dependency wheels, downloaded now if this clone has none for
    the current requirements; None if they cannot be downloaded."""
    ready = CACHE / wheelhouse_key()
    if ready.is_dir():
        return ready
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix="partial-", dir=CACHE))

    source_only = source_only_pins()
    wheels_only = partial / "requirements"
    wheels_only.mkdir()

    def download(kind: str) -> subprocess.CompletedProcess:
        listed = wheels_only / f"{kind}.txt"  # the requirements but the source-only ones, built below
        listed.write_text("".join(line + "\n" for line in requirements(kind).read_text().splitlines()
                                  if line.strip() not in source_only))
        return subprocess.run([python, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                               "--dest", str(partial), *PLATFORM, "-r", str(listed)],
                              capture_output=True, text=True, timeout=600)

    def build_source_only() -> subprocess.CompletedProcess:  # as infra/build_function.sh makes them
        return subprocess.run([python, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
                               "--wheel-dir", str(partial), *sorted(source_only)],
                              capture_output=True, text=True, timeout=600)

    with ThreadPoolExecutor(len(KINDS)) as pool:
        done = list(pool.map(download, KINDS))
    if source_only:
        done.append(build_source_only())
    shutil.rmtree(wheels_only)
    failed = [d for d in done if d.returncode != 0]
    if failed:
        log.write("downloading the functions' dependencies failed; sam build asks the package index:\n"
                  + "".join(d.stdout + d.stderr for d in failed))
        shutil.rmtree(partial, ignore_errors=True)
        return None
    for stale in CACHE.iterdir():  # the wheels of earlier requirements
        if stale != partial:
            shutil.rmtree(stale, ignore_errors=True)
    partial.rename(ready)
    return ready


def job(folder: Path, sam: str, python: str) -> None:
    """The background build (``python -m tests.deploy.sam_build FOLDER SAM PYTHON``): the
    dependencies, then ``sam build``; its exit code in FOLDER/returncode when it ends."""
    env = dict(os.environ, PATH=f"{Path(python).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    with open(folder / "stdout", "w") as out, open(folder / "stderr", "w") as err:
        wheels = wheelhouse(python, err)
        if wheels is not None:
            env.update(PIP_FIND_LINKS=str(wheels), PIP_NO_INDEX="1")
        err.flush()
        args = [sam, "build", "--template", TEMPLATE_PATH, "--build-dir", folder / "build",
                "--cache-dir", folder / "cache", "--parallel"]
        code = subprocess.run([str(a) for a in args], cwd=REPO_ROOT, env=env, stdout=out, stderr=err).returncode
    (folder / "returncode.partial").write_text(str(code))
    (folder / "returncode.partial").rename(folder / "returncode")


@dataclass
class Built:
    returncode: int
    stdout: str
    stderr: str
    build_dir: Path


class SamBuild:
    """One ``sam build`` of template.yaml into ``folder``, running in the background: started here
    (``owner``), or by another process of this run and waited for here."""

    def __init__(self, folder: Path, proc: subprocess.Popen | None = None):
        self.folder, self.proc = folder, proc
        self.build_dir = folder / "build"

    @classmethod
    def begin(cls, folder: Path, sam: Path, python: str, env: dict[str, str]) -> SamBuild:
        folder.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen([sys.executable, "-m", "tests.deploy.sam_build", str(folder), str(sam), python],
                                cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=lambda: os.nice(10))
        (folder / "started").write_text(str(proc.pid))
        return cls(folder, proc)

    def result(self, timeout: float) -> Built:
        deadline = time.monotonic() + timeout
        code = self.folder / "returncode"
        while not code.exists():
            if time.monotonic() > deadline:
                self.kill()
                raise subprocess.TimeoutExpired("sam build", timeout)
            if self.proc is not None and self.proc.poll() is not None and not code.exists():
                raise RuntimeError(f"the background sam build ended with {self.proc.returncode} before sam did: "
                                   + self._read("stderr")[-4000:])
            time.sleep(0.2)
        return Built(int(code.read_text()), self._read("stdout"), self._read("stderr"), self.build_dir)

    def _read(self, name: str) -> str:
        path = self.folder / name
        return path.read_text(errors="replace") if path.exists() else ""

    def kill(self) -> None:
        """Stop the build (the job and sam with it: they are one process group) if it was started here."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def close(self) -> None:
        if self.proc is not None:  # the owner tidies up; a process that only waited leaves it
            self.kill()
            shutil.rmtree(self.folder, ignore_errors=True)


_started: SamBuild | None = None
_shared: Path | None = None  # where this run's controlling process builds (a parallel run's worker)


def share(folder: Path) -> None:
    """This process is a worker of a parallel run: the build, if any, is the controller's, in ``folder``."""
    global _shared
    _shared = folder


def start(sam: Path, env: dict[str, str], folder: Path | None = None) -> SamBuild | None:
    """The run's build: the controller's (a worker waits for it), or started now unless there is
    no python3.12 (the test then skips); once per run."""
    global _started
    if _started is None:
        if _shared is not None and (_shared / "started").exists():
            _started = SamBuild(_shared)
        else:
            found = python312()
            if found is not None:
                _started = SamBuild.begin(folder or Path(tempfile.mkdtemp(prefix="countersign-sam-build-")),
                                          sam, found, env)
    return _started


def stop() -> None:
    global _started
    if _started is not None:
        _started.close()
        _started = None


if __name__ == "__main__":
    job(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
