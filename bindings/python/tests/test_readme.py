"""The README's examples, run as they are written (with their paths moved to a temporary
directory), so that what a reader copies works."""

import contextlib
import io
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def run_block(code, tmp_path):
    # Every "/tmp/NAME" in an example becomes a fresh directory under tmp_path.
    code = re.sub(r'"/tmp/([\w-]+)"', lambda m: repr(str(tmp_path / m.group(1))), code)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    return out.getvalue()


def test_the_readme_has_its_examples():
    assert len(python_blocks()) >= 2


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_each_readme_example_runs(index, tmp_path):
    run_block(python_blocks()[index], tmp_path)


def test_the_first_example_prints_the_range_and_the_keys(tmp_path):
    out = run_block(python_blocks()[0], tmp_path).splitlines()
    assert out == [
        "b'cherry' b'dark red'",
        "[b'damson', b'cherry', b'apple']",
    ]
