"""The complete example of docs/python.md runs as written."""

import os
import re
from pathlib import Path

from conftest import REPO


def test_the_example_of_the_docs_runs(tmp_path, capsys):
    page = (REPO / "docs" / "python.md").read_text(encoding="utf-8")
    example = re.search(r"## A complete example.*?```python\n(.*?)```", page, re.S).group(1)
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(example, "docs/python.md", "exec"), {})
    finally:
        os.chdir(here)
    printed = capsys.readouterr().out
    assert printed.startswith("625 ") and "'sheet.pc2', 'sheet.usda'" in printed, printed
    assert (tmp_path / "out/sheet/summary.toml").is_file() and (tmp_path / "out/softer/sheet.pc2").is_file()
