"""The examples of the README section "Beyond the peers, round 2" print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Beyond the peers, round 2"


def _examples():
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return re.findall(r"```python\n(.*?)```", text[start : end if end > 0 else None], flags=re.DOTALL)


def test_the_section_has_its_five_examples():
    assert len(_examples()) == 5


@pytest.mark.parametrize("index", range(5))
def test_example_prints_what_its_comments_say(index):
    code = _examples()[index]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README example {index}", "exec"), {})  # noqa: S102
    lines = out.getvalue().strip().splitlines()
    assert lines
    for line in lines:
        assert f"# {line.strip()}" in code, line
