import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# The C++ build the examples come from (scripts/setup.sh builds build/).
BUILD = pathlib.Path(os.environ.get("HEDRA_BUILD_DIR", REPO / "build"))


@pytest.fixture
def repo():
    return REPO


@pytest.fixture
def build_dir():
    return BUILD
