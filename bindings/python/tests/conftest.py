"""Shared fixtures, and guards so that a run which tests nothing cannot pass.

- A session that collected no test, or in which fewer tests passed than MIN_PASSED, fails.
- A skipped test fails the session too (nothing here is optional), unless
  KWIRE_ALLOW_SKIP=1 is set by hand.
- Tests can add lines to the final report with the ``report`` fixture (the conformance
  coverage tables, for instance).
"""

import json
import os
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import kwire

REPO = Path(__file__).resolve().parents[3]
VECTORS = REPO / "conformance" / "vectors"
EXAMPLES = REPO / "examples" / "data"

# The suite has more tests than this; a run with fewer passing ones lost some.
MIN_PASSED = 40

_report: List[str] = []
_counts: Dict[str, int] = {"passed": 0, "failed": 0, "skipped": 0}


@pytest.fixture(scope="session")
def kw() -> "kwire.Kwire":
    return kwire.Kwire()


@pytest.fixture(scope="session")
def catalogue(kw: "kwire.Kwire") -> "kwire.Catalogue":
    return kw.api_catalogue()


@pytest.fixture
def report() -> Iterator[List[str]]:
    yield _report


def read_jsonl(path: Path, **kw: Any) -> List[Dict[str, Any]]:
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line, **kw))
    return out


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _counts[report.outcome] = _counts.get(report.outcome, 0) + 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus not in (0, pytest.ExitCode.TESTS_FAILED):
        return
    problems = []
    if session.testscollected == 0:
        problems.append("no test was collected")
    if _counts["skipped"] and os.environ.get("KWIRE_ALLOW_SKIP") != "1":
        problems.append(f"{_counts['skipped']} tests were skipped")
    # The whole suite ran: no -k, no -m, no paths given (pytest took them from testpaths).
    cfg = session.config
    from_testpaths = getattr(cfg, "args_source", None) == pytest.Config.ArgsSource.TESTPATHS
    full_run = from_testpaths and not cfg.option.keyword and not cfg.option.markexpr
    if full_run and _counts["passed"] < MIN_PASSED:
        problems.append(f"only {_counts['passed']} tests passed, the suite has at least {MIN_PASSED}")
    if problems:
        _report.append("kwire test guard: " + "; ".join(problems))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in _report:
        terminalreporter.write_line(line)
