"""The documentation: README.md stays a short entry point, and what it and docs/ name exists.

Links resolve to files and headings, documented ``manage.py`` commands answer ``--help``,
documented ``bin/`` scripts are executable, and code-quoted paths of the project are there.
None of this needs a database.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.core.management import ManagementUtility

from tests.conftest import ROOT

README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 300

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
LINK = re.compile(r"!?\[(?:[^\]\n]|\n(?!\n))*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
MANAGE_COMMAND = re.compile(r"manage\.py\s+([a-z][a-z0-9_]*)")
BIN_SCRIPT = re.compile(r"(?<![\w./-])bin/([\w-]+)")
CODE_PATH = re.compile(r"`((?:agent|bench|bin|deploy|docs|jobs|jobsite|ops|packages|static|templates|tests)/[^`\s]*)`")


def prose(text: str) -> str:
    """The text without code: a bracket in a code sample is not a link, a ``#`` not a heading."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for match in HEADING.finditer(FENCE.sub("", page.read_text())):
        base = anchor(match.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(page: Path) -> list[str]:
    return LINK.findall(prose(page.read_text()))


def documented(pattern: re.Pattern[str]) -> dict[str, list[str]]:
    """Each name the pattern finds in README.md and docs/, with the pages that name it."""
    names: dict[str, list[str]] = {}
    for page in PAGES:
        for name in sorted(set(pattern.findall(page.read_text()))):
            names.setdefault(name, []).append(str(page.relative_to(ROOT)))
    return names


COMMANDS = documented(MANAGE_COMMAND)
SCRIPTS = documented(BIN_SCRIPT)


def test_the_readme_is_short():
    lines = README.read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail into docs/"


def test_the_readme_sets_up_with_exactly_two_commands():
    section = README.read_text().split("## Set up", 1)[1].split("\n## ", 1)[0]
    block = FENCE.search(section)
    assert block is not None, "the Set up section shows its commands in a code block"
    commands = [line.split("#", 1)[0].strip() for line in block.group(0).splitlines()[1:-1]]
    assert [c for c in commands if c] == ["bin/demo", "bin/test"]


def test_every_docs_page_is_linked_from_the_readme():
    linked = {(README.parent / target.split("#", 1)[0]).resolve() for target in links(README)}
    unlinked = [str(page.relative_to(ROOT)) for page in PAGES[1:] if page.resolve() not in linked]
    assert unlinked == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve_to_files_and_headings(page):
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
            continue
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            broken.append(f"{target}: no heading #{fragment} in {file.relative_to(ROOT)}")
    assert not broken, "\n".join(broken)


def test_the_docs_name_commands_and_scripts():
    """The patterns below still find what the pages document (else the checks check nothing)."""
    assert {"runworkers", "createmember", "createtoken", "backupdb"} <= set(COMMANDS)
    assert {"demo", "test"} <= set(SCRIPTS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_documented_command_answers_help(command, capsys):
    """``manage.py COMMAND --help`` exits 0, run the way manage.py runs it."""
    with pytest.raises(SystemExit) as exited:
        ManagementUtility(["manage.py", command, "--help"]).execute()
    out, err = capsys.readouterr()
    assert exited.value.code == 0, f"manage.py {command} (in {', '.join(COMMANDS[command])}): {err.strip()}"
    assert f"manage.py {command}" in out


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_each_documented_script_is_executable(script):
    path = ROOT / "bin" / script
    assert path.is_file(), f"bin/{script} (in {', '.join(SCRIPTS[script])}) does not exist"
    assert os.access(path, os.X_OK), f"bin/{script} is not executable"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_code_quoted_project_paths_exist(page):
    missing = sorted({p for p in CODE_PATH.findall(page.read_text()) if not (ROOT / p.rstrip("/")).exists()})
    assert not missing, f"named but not in the project: {', '.join(missing)}"
