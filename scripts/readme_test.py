"""Runs the code blocks of a Markdown file (the README) the way a new user
would: saves the programs it says to save, runs its shell lines, and checks
the output it shows. Run by `make test-readme` (part of `make test`) after
`make build`:

    .venv/bin/python scripts/readme_test.py README.md

Every fenced code block must be preceded (on the line before the fence) by
an HTML comment, invisible on GitHub, saying what the test does with it:

    <!-- readme-test: save PATH -->      write the block to PATH
    <!-- readme-test: same-as PATH -->   the block must equal the repository file PATH
    <!-- readme-test: run -->            run each line with bash; each must exit 0
    <!-- readme-test: expect -->         every line must appear in the output of the
                                         preceding `run` block (whitespace-insensitive)
    <!-- readme-test: skip REASON -->    not run, for the reason given

A block without a comment fails the test, so a new block cannot go
untested by accident. Commands run in target/readme-test/, which holds a
symbolic link to every top-level entry of the repository and the files
saved from the README: relative paths work as they do from the repository
root, and the saved files do not litter the work tree.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = ROOT / "target" / "readme-test"
MARKER = re.compile(r"^<!--\s*readme-test:\s*([a-z-]+)\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^```(\S*)\s*$")
# A command that hangs (a server waiting on stdin) must fail, not stall `make test`.
COMMAND_TIMEOUT_S = 300


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    action: str
    argument: str


class ReadmeError(Exception):
    pass


def parse(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ReadmeError(f"{path.name}:{start + 1}: code block never closed")
        marker = MARKER.match(lines[start - 1]) if start > 0 else None
        if marker is None:
            raise ReadmeError(
                f"{path.name}:{start + 1}: a ```{fence.group(1)} block without a "
                "<!-- readme-test: ... --> comment on the line before it"
            )
        action, argument = marker.group(1), marker.group(2)
        if action not in {"save", "same-as", "run", "expect", "skip"}:
            raise ReadmeError(f"{path.name}:{start}: unknown readme-test action {action!r}")
        if action in {"save", "same-as", "skip"} and not argument:
            raise ReadmeError(f"{path.name}:{start}: readme-test {action} needs an argument")
        blocks.append(Block(start + 1, fence.group(1), "\n".join(body) + "\n", action, argument))
        i += 1
    return blocks


def prepare_scratch() -> None:
    shutil.rmtree(SCRATCH, ignore_errors=True)
    SCRATCH.mkdir(parents=True)
    for entry in ROOT.iterdir():
        if entry.name != ".git":
            (SCRATCH / entry.name).symlink_to(entry)


def normalize(text: str) -> str:
    return " ".join(text.split())


def run_lines(block: Block, name: str) -> str:
    output = []
    for command in block.text.splitlines():
        if not command.strip() or command.lstrip().startswith("#"):
            continue
        print(f"$ {command}", flush=True)
        try:
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=SCRATCH,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired as timeout:
            raise ReadmeError(f"{name}:{block.line}: `{command}` did not finish in {COMMAND_TIMEOUT_S} s") from timeout
        sys.stdout.write(done.stdout)
        if done.returncode != 0:
            raise ReadmeError(
                f"{name}:{block.line}: `{command}` exited with {done.returncode}\n{done.stdout}{done.stderr}"
            )
        output.append(done.stdout)
    return "".join(output)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    readme = Path(sys.argv[1]).resolve()
    name = readme.name
    try:
        blocks = parse(readme)
        prepare_scratch()
        last_output: str | None = None
        counts: dict[str, int] = {}
        for block in blocks:
            counts[block.action] = counts.get(block.action, 0) + 1
            if block.action == "skip":
                continue
            if block.action == "save":
                target = SCRATCH / block.argument
                if target.is_symlink() or target.parent.resolve() != SCRATCH.resolve():
                    raise ReadmeError(f"{name}:{block.line}: save {block.argument}: not a new top-level file")
                target.write_text(block.text, encoding="utf-8")
            elif block.action == "same-as":
                expected = (ROOT / block.argument).read_text(encoding="utf-8")
                if block.text != expected:
                    raise ReadmeError(f"{name}:{block.line}: the block differs from {block.argument}")
            elif block.action == "run":
                last_output = run_lines(block, name)
            elif block.action == "expect":
                if last_output is None:
                    raise ReadmeError(f"{name}:{block.line}: expect with no run block before it")
                seen = normalize(last_output)
                for line in block.text.splitlines():
                    if line.strip() and normalize(line) not in seen:
                        raise ReadmeError(
                            f"{name}:{block.line}: expected {line.strip()!r} in the output:\n{last_output}"
                        )
                last_output = None
    except ReadmeError as error:
        print(f"readme test FAILED: {error}", file=sys.stderr)
        return 1
    summary = ", ".join(f"{n} {action}" for action, n in sorted(counts.items()))
    print(f"readme test: {len(blocks)} code blocks of {name} passed ({summary})")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("RUST_LOG", "warn")
    sys.exit(main())
