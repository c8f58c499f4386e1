import os
from pathlib import Path

import pytest

from support.toolchains import Builder

THIRD_PARTY = {
    "librocrand": "/usr/lib/x86_64-linux-gnu/librocrand.so.1",
    "librocsparse": "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1",
}


@pytest.fixture(scope="session")
def builder(tmp_path_factory) -> Builder:
    cache = os.environ.get("SPILLWAY_TEST_BUILD_CACHE")
    root = Path(cache) if cache else tmp_path_factory.mktemp("builds")
    root.mkdir(parents=True, exist_ok=True)
    return Builder(root)


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


DATA = Path(__file__).parent / "data"
