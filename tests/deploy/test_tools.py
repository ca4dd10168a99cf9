"""AWS's own tools on template.yaml, offline: ``sam validate --lint``, ``cfn-lint`` and ``sam build``."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from tests.deploy import sam_build
from tests.deploy.sam_build import python312
from tests.deploy.tools import tool, tool_env
from tests.support.aws import REPO_ROOT, TEMPLATE_PATH

LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024
ELF_MACHINE_AARCH64 = 183


def _run(args: list, timeout: int, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=REPO_ROOT, env=env or tool_env(), capture_output=True,
                          text=True, timeout=timeout)


def test_sam_validate_lint():
    done = _run([tool("sam"), "validate", "--lint", "--template", TEMPLATE_PATH], timeout=120)
    assert done.returncode == 0, f"sam validate --lint failed:\n{done.stdout}\n{done.stderr}"
    assert "is a valid SAM Template" in done.stdout + done.stderr


def test_cfn_lint_including_informational_rules():
    # -c I adds the informational rules (e.g. I3011: a stateful resource without DeletionPolicy).
    done = _run([tool("cfn-lint"), "-c", "I", "--", TEMPLATE_PATH], timeout=120)
    assert done.returncode == 0, f"cfn-lint failed:\n{done.stdout}\n{done.stderr}"


def _pyc_flags(path: Path) -> tuple[bytes, int]:
    with open(path, "rb") as fh:
        header = fh.read(8)
    return header[:4], struct.unpack("<I", header[4:8])[0]


def _elf_machine(path: Path) -> int | None:
    with open(path, "rb") as fh:
        header = fh.read(20)
    if header[:4] != b"\x7fELF":
        return None
    return struct.unpack("<H", header[18:20])[0]


def quoted_bundle_sizes() -> dict[str, int]:
    """The unzipped sizes docs/deploy.md quotes (``| McpFunction | 76 MiB |``), per function."""
    import re

    text = (REPO_ROOT / "docs" / "deploy.md").read_text()
    return {name: int(mib) for name, mib in re.findall(r"^\| (\w+Function) \| (\d+) MiB \|$", text, re.M)}


def test_the_quoted_bundle_sizes_name_every_function(template):
    functions = {n for n, r in template["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}
    assert set(quoted_bundle_sizes()) == functions


def test_sam_build():
    """``sam build`` through infra/Makefile: each function's own dependencies for arm64, no MCP SDK
    in the api function, neither the SDK nor a web framework in the notifier and the sweeper,
    precompiled unchecked-hash bytecode for python3.12."""
    found = python312()
    if found is None:
        pytest.skip("sam build needs a working python3.12 (the runtime's version, used to precompile the "
                    "bytecode); none on PATH or under pyenv, so this one check is skipped")
    # Started in the background when the run was collected (tests/deploy/sam_build.py), or now.
    done = sam_build.start(tool("sam"), tool_env()).result(timeout=600)
    build_dir = done.build_dir
    assert done.returncode == 0, f"sam build failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"

    magic312 = subprocess.run(
        [found, "-c", "import importlib.util, sys; sys.stdout.buffer.write(importlib.util.MAGIC_NUMBER)"],
        capture_output=True,
        check=True,
    ).stdout
    strays: list[str] = []  # bundles whose size strays from docs/deploy.md's table, all named at once
    for function, handler, must_have, must_not_have in (
        ("McpFunction", "countersign/handlers/mcp.py", ["mcp", "mangum", "nacl", "boto3", "aws_lambda_powertools"], []),
        ("ApiFunction", "countersign/handlers/api.py", ["fastapi", "mangum", "nacl", "boto3", "aws_lambda_powertools"],
         ["mcp", "mcp_types", "uvicorn", "sse_starlette"]),
        *((function, f"countersign/handlers/{kind}.py", ["pydantic", "nacl", "boto3", "aws_lambda_powertools"],
           ["mcp", "mcp_types", "uvicorn", "sse_starlette", "fastapi", "starlette", "mangum"])
          for function, kind in (("NotifierFunction", "notifier"), ("SweeperFunction", "sweeper"))),
        # the smoke canary's function: the mcp bundle, for its MCP client (httpx2) and anyio
        ("SmokeFunction", "countersign/handlers/smoke.py", ["mcp", "httpx2", "anyio", "boto3"], []),
    ):
        root = build_dir / function
        assert (root / handler).is_file(), f"{function}: {handler} missing from the bundle"
        for name in must_have:
            assert (root / name).is_dir(), f"{function}: dependency {name} missing"
        for name in must_not_have:
            assert not (root / name).exists(), f"{function} ships {name}, which only the MCP function needs"
        assert not list(root.glob("countersign*.egg-info")), "the bundle carries packaging metadata of the source tree"
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        assert size < LAMBDA_UNZIPPED_LIMIT, f"{function} is {size / 2**20:.0f} MiB unzipped"
        quoted = quoted_bundle_sizes()[function]  # docs/deploy.md's table stays true
        if abs(size / 2**20 - quoted) > 0.15 * quoted:
            strays.append(f"{function} is {size / 2**20:.0f} MiB unzipped; docs/deploy.md says {quoted} MiB")

        # Bytecode: every countersign module precompiled for 3.12 with unchecked hashes (flags == 0b01).
        sources = sorted((root / "countersign").rglob("*.py"))
        assert sources
        for source in sources:
            cache = source.parent / "__pycache__" / f"{source.stem}.cpython-312.pyc"
            assert cache.is_file(), f"{function}: no precompiled {cache.relative_to(root)}"
            magic, flags = _pyc_flags(cache)
            assert magic == magic312 and flags == 0b01, f"{cache}: magic {magic!r} flags {flags:#b}"
        # Native code is for Graviton (arm64), even when built on x86_64.
        natives = [p for p in root.rglob("*.so")]
        assert natives, f"{function}: no native extension at all? (pydantic_core, nacl, cffi expected)"
        wrong = [str(p.relative_to(root)) for p in natives if _elf_machine(p) not in (None, ELF_MACHINE_AARCH64)]
        assert not wrong, f"{function}: native code for another architecture: {wrong[:5]}"
    assert not strays, "; ".join(strays) + ": update docs/deploy.md"
