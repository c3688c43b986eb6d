"""examples/python_client.py, which docs/python.md shows, runs as written against the service."""

from __future__ import annotations

import os
import subprocess
import sys

from support import REPO, Service


def test_the_client_example_runs(service: Service) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARTIFACT_STORE_")}
    env.update(
        ARTIFACT_STORE_URL=service.url,
        # A tenant-wide token, as npm start prints: the example names its session.
        ARTIFACT_STORE_TOKEN=service.token(),
        PYTHONPATH=str(REPO / "clients" / "python" / "src"),
    )
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "python_client.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("stored tableau.download_workbook_")
    assert lines[0].endswith("(application/pdf, 43 bytes) in session s-42")
    assert lines[1] == "read 43 bytes, head b'%PDF-1.4', listed 1, link proxy"
    assert lines[2].startswith("async: stored and read back 28 characters as observation.SearchTool_")
