"""``sam build`` for tests/deploy/test_tools.py::test_sam_build, started in the background as soon
as the run knows it will need it.

The build is mostly waiting: pip fetching arm64 wheels for four functions from the package index.
Run inside the test it held the whole suite up for a minute or more; started when collection
finishes (tests/deploy/conftest.py), at low priority, it overlaps the tests that come before it,
and the test waits for what is left. The command, its environment and every assertion on its
result are the test's own, unchanged: only the moment it starts moved.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.aws import REPO_ROOT, TEMPLATE_PATH


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


@dataclass
class Built:
    returncode: int
    stdout: str
    stderr: str
    build_dir: Path


class SamBuild:
    """One ``sam build`` of template.yaml into a scratch folder, running in the background."""

    def __init__(self, sam: Path, python: str, env: dict[str, str]):
        self.python = python
        self.scratch = Path(tempfile.mkdtemp(prefix="countersign-sam-build-"))
        self.build_dir = self.scratch / "build"
        env = dict(env, PATH=f"{Path(python).parent}{os.pathsep}{env.get('PATH', '')}")
        self.out = open(self.scratch / "stdout", "w+")
        self.err = open(self.scratch / "stderr", "w+")
        args = [sam, "build", "--template", TEMPLATE_PATH, "--build-dir", self.build_dir,
                "--cache-dir", self.scratch / "cache", "--parallel"]
        self.proc = subprocess.Popen([str(a) for a in args], cwd=REPO_ROOT, env=env, stdout=self.out,
                                     stderr=self.err, text=True, preexec_fn=lambda: os.nice(10))

    def result(self, timeout: float) -> Built:
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        self.out.seek(0)
        self.err.seek(0)
        return Built(self.proc.returncode, self.out.read(), self.err.read(), self.build_dir)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        self.err.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


_started: SamBuild | None = None


def start(sam: Path, env: dict[str, str]) -> SamBuild | None:
    """Start the build unless there is no python3.12 (the test then skips); once per run."""
    global _started
    if _started is None:
        found = python312()
        if found is not None:
            _started = SamBuild(sam, found, env)
    return _started


def started() -> SamBuild | None:
    return _started


def stop() -> None:
    global _started
    if _started is not None:
        _started.close()
        _started = None
