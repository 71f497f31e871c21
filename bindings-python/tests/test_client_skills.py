"""The skills extension (SEP-2640) from the Python clients: listing,
loading with the checks core makes, and reading a skill's files."""

from __future__ import annotations

import asyncio
import hashlib
import pathlib
from collections.abc import Iterator

import ferromcp
import pytest
from conftest import TIMEOUT

SKILL_MD = "---\nname: release\ndescription: How we release\n---\n# Steps\n"


@pytest.fixture
def url(tmp_path: pathlib.Path) -> Iterator[str]:
    skill = tmp_path / "ops" / "release"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "scripts" / "tag.sh").write_bytes(b"#!/bin/sh\ngit tag \"$1\"\n")
    server = ferromcp.Server("skills")
    assert server.add_skills(tmp_path) == ["skill://ops/release/SKILL.md"]
    serving = server.start("http", port=0)
    yield f"http://127.0.0.1:{serving.port}/mcp"
    serving.stop()
    serving.wait(TIMEOUT)


def test_list_load_and_read(url: str) -> None:
    with ferromcp.SyncClient.http(url) as client:
        (skill,) = client.list_skills()
        assert (skill.name, skill.description) == ("release", "How we release")
        assert skill.files is not None
        by_uri = {f.uri: f for f in skill.files}
        tag = by_uri["skill://ops/release/scripts/tag.sh"]
        assert tag.digest == "sha256:" + hashlib.sha256(b"#!/bin/sh\ngit tag \"$1\"\n").hexdigest()
        assert client.get_skill(skill.uri) == skill
        loaded = client.load_skill(skill)
        assert loaded.skill_md == SKILL_MD
        assert loaded.read("scripts/tag.sh").startswith(b"#!/bin/sh")
        assert loaded.read(tag.uri) == loaded.read("scripts/tag.sh")
        # A file the entry does not list is refused without a request.
        with pytest.raises(ferromcp.ProtocolError, match="does not list it"):
            loaded.read("scripts/other.sh")


def test_an_entry_that_does_not_match_is_refused(url: str) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(url) as client:
            (skill,) = await client.list_skills()
            wrong = dict(skill.raw, frontmatter={"name": "release", "description": "changed"})
            with pytest.raises(ferromcp.ProtocolError, match="frontmatter differs"):
                await client.load_skill(ferromcp.Skill.from_dict(wrong))
            loaded = await client.load_skill(skill.uri)  # by URI: skills/get first
            assert loaded.skill == skill

    asyncio.run(main())
