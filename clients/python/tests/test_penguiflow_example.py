"""examples/penguiflow_store.py runs as its docstring says, against the test service."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from support import REPO, Service


def test_the_example_stores_and_reads_back_an_observation(service: Service) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARTIFACT_STORE_")}
    env.update(
        ARTIFACT_STORE_URL=service.url,
        ARTIFACT_STORE_TOKEN=service.token(),
        PYTHONPATH=str(REPO / "clients" / "python" / "src"),
    )
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "penguiflow_store.py")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    stored = re.search(r"stored (observation\.SearchTool_[0-9a-f]{24}) \((\d+) bytes\)", done.stdout)
    assert stored, done.stdout
    assert f"read back {stored.group(2)} bytes of application/json" in done.stdout
    assert int(stored.group(2)) > 20_000
