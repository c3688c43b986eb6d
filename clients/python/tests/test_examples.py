"""The Python examples that docs/python.md shows run as their docstrings say, against the test service."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from support import REPO, Service


def run_example(name: str, service: Service) -> str:
    """Runs examples/<name> as a reader would, with a tenant-wide token as npm start prints one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARTIFACT_STORE_")}
    env.update(
        ARTIFACT_STORE_URL=service.url,
        ARTIFACT_STORE_TOKEN=service.token(),
        PYTHONPATH=str(REPO / "clients" / "python" / "src"),
    )
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / name)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_client_example_stores_reads_lists_links_deletes_and_ends_the_session(service: Service) -> None:
    lines = run_example("python_client.py", service).splitlines()
    assert lines[0].startswith("stored tableau.download_workbook_")
    assert lines[0].endswith("(application/pdf, 43 bytes) in session s-42")
    assert lines[1] == "read 43 bytes, head b'%PDF-1.4', listed 1, link proxy"
    assert lines[2] == "ended session s-42: 1 references, 28 bytes"
    assert lines[3].startswith("async: stored and read back 28 characters as observation.SearchTool_")


def test_the_names_example_saves_versions_reads_lists_links_and_deletes(service: Service) -> None:
    lines = run_example("names.py", service).splitlines()
    assert lines[0] == "saved summary.md version 1 (text/markdown) in adk.reports"
    assert lines[1] == (
        "latest b'# Q3\\n\\nFinal.' {'status': 'final'}, version 0 b'# Q3\\n\\nDraft.', "
        "versions [0, 1], names ['summary.md']"
    )
    assert lines[2] == "link proxy; session s-43 reads preferences.json b'{\"tz\": \"UTC\"}' and summary.md as None"
    assert re.fullmatch(r"async: versions \[0, 1, 2, 3, 4\], latest 4 reads 'step [0-4]'", lines[3]), lines[3]


def test_the_penguiflow_example_stores_and_reads_back_an_observation(service: Service) -> None:
    out = run_example("penguiflow_store.py", service)
    stored = re.search(r"stored (observation\.SearchTool_[0-9a-f]{24}) \((\d+) bytes\)", out)
    assert stored, out
    assert f"read back {stored.group(2)} bytes of application/json" in out
    assert int(stored.group(2)) > 20_000
