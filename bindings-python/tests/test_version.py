"""``ferromcp.__version__`` is the version of the release, which every crate
and package inherits from Cargo.toml's ``[workspace.package]``."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import ferromcp

CARGO_TOML = Path(__file__).resolve().parents[2] / "Cargo.toml"


def workspace_version() -> str:
    section = re.search(r"^\[workspace\.package\]\n(.*?)(?=^\[|\Z)", CARGO_TOML.read_text(), re.M | re.S)
    assert section, "Cargo.toml has no [workspace.package]"
    found = re.search(r'^version\s*=\s*"([^"]+)"', section.group(1), re.M)
    assert found, "Cargo.toml [workspace.package] has no version"
    return found.group(1)


def test_version_is_the_workspace_version() -> None:
    assert ferromcp.__version__ == workspace_version()


def test_version_is_the_distribution_version() -> None:
    assert ferromcp.__version__ == version("ferromcp")
