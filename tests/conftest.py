import os
from pathlib import Path

import pytest

from support.rocm_packages import PACKAGES as ROCM_PACKAGES
from support.rocm_packages import RocmPackage
from support.rocm_packages import locate as locate_rocm_package
from support.toolchains import Builder
from support.one_machine_run import one_machine_run, one_machine_twin  # noqa: F401  (session fixtures)
from support.matrix_fixtures import small_cell  # noqa: F401  (a session fixture)

# Inside a Nix build (the flake's `checks.tests`) the suite runs against the
# Nix-built package with only the build's inputs: the fault tests (signals, full
# disks, immutable folders, the fuzz smoke), the oracle tests on Debian's ROCm
# packages, the sid-root cells and the package build (git, the package index)
# need the host machine and run in .ci/run only.
collect_ignore_glob = (["faults/*", "oracle/*", "unit/matrix/test_root_cells.py", "unit/matrix/test_amd_llvm.py",
                        "package/*"]
                       if os.environ.get("NIX_BUILD_TOP") else [])

THIRD_PARTY = {
    "librocrand": "/usr/lib/x86_64-linux-gnu/librocrand.so.1",
    "librocsparse": "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1",
}


@pytest.fixture(scope="session")
def builder(tmp_path_factory) -> Builder:
    cache = os.environ.get("SPILLWAY_TEST_BUILD_CACHE")
    if cache:
        root = Path(cache)
    elif os.environ.get("PYTEST_XDIST_WORKER"):
        # pytest-xdist: the workers' base folders share a parent; one build cache there, so a fixture
        # kernel is compiled once for the run, not once per worker (Builder locks each build).
        root = tmp_path_factory.getbasetemp().parent / "builds"
    else:
        root = tmp_path_factory.mktemp("builds")
    root.mkdir(parents=True, exist_ok=True)
    return Builder(root)


# Session fixtures that build something big, each run once in one worker under pytest-xdist
# (`--dist loadgroup`, as scripts/run-tests.sh runs the suite): the tests that use one go to the
# same worker.  Every other test is grouped with its file, so module fixtures run once too.
SHARED_SESSION_FIXTURES = {"one_machine_run": "one-machine", "one_machine_twin": "one-machine",
                           "small_cell": "small-cell"}


# The groups that take minutes go to the workers first (scripts/run-tests.sh passes
# --no-loadscope-reorder, so groups start in this order), leaving the many short ones to even out
# the end of the run: the matrix build of one_machine_run, then these files.
LONG_FILES = ("tests/faults/test_fuzz_smoke.py", "tests/unit/matrix/test_flake.py",
              "tests/oracle/test_golden_large_outputs.py", "tests/oracle/test_isa_libraries.py",
              "tests/unit/matrix/test_history.py", "tests/oracle/test_rocm_libraries.py",
              "tests/unit/cli/test_html_pages.py", "tests/package/test_distribution.py")


def _group(item) -> str:
    return next((SHARED_SESSION_FIXTURES[name] for name in item.fixturenames if name in SHARED_SESSION_FIXTURES),
                item.nodeid.split("::")[0])


@pytest.hookimpl(tryfirst=True)         # before xdist's own hook reads the groups off the markers
def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("xdist"):
        return
    group_of = {item.nodeid: _group(item) for item in items}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(group_of[item.nodeid]))

    def start(item) -> int:
        group = group_of[item.nodeid]
        if group in SHARED_SESSION_FIXTURES.values():
            return 0
        return 1 + LONG_FILES.index(group) if group in LONG_FILES else 1 + len(LONG_FILES)
    items.sort(key=start)                   # stable: the order within each group is kept


def third_party(name: str) -> Path:
    """A ROCm library built by others, installed from Debian by the set-up step."""
    path = Path(THIRD_PARTY[name])
    if not path.exists():
        message = f"{path} missing: apt-get install {name.removeprefix('lib')}-dev or lib{name[3:]}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def librocrand() -> Path:
    return third_party("librocrand")


@pytest.fixture(scope="session")
def librocsparse() -> Path:
    return third_party("librocsparse")


@pytest.fixture(scope="session", params=sorted(ROCM_PACKAGES))
def rocm_package(request) -> RocmPackage:
    """Each Debian ROCm package scripts/fetch-rocm-libraries.sh unpacks
    (librocsparse1 7.2.4 and 6.4.3, the whole librocblas5 7.2.4), with its
    committed oracle expectation."""
    return locate_rocm_package(request.param)


DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _not_under_github_actions(monkeypatch):
    """spillway picks --format github (and appends to the job summary) under
    GITHUB_ACTIONS=true when no format is asked for; tests ask explicitly."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def epoch(monkeypatch):
    """Baselines written at a fixed time (their provenance reads SOURCE_DATE_EPOCH)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
