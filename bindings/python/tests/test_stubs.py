"""The type stubs name every public attribute of the compiled module, and nothing else."""

import ast
import pathlib

import strata
from strata import _strata

STUBS = pathlib.Path(__file__).parent.parent / "strata" / "_strata.pyi"


def stub_names():
    """Top-level names, and each class's names (with those of its stub base classes)."""
    tree = ast.parse(STUBS.read_text())
    top, classes, bases = set(), {}, {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top.add(node.name)
            classes[node.name] = {
                n.name if not isinstance(n, (ast.AnnAssign, ast.Assign)) else ""
                for n in node.body
                if isinstance(n, (ast.FunctionDef, ast.AnnAssign))
            } | {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
            bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]
        elif isinstance(node, ast.FunctionDef):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            top.add(node.target.id)

    def members(name):
        out = set(classes.get(name, set()))
        for b in bases.get(name, []):
            out |= members(b)
        return out - {""}

    return top, members


def test_every_public_name_has_a_stub():
    top, members = stub_names()
    public = {n for n in dir(_strata) if not n.startswith("_")}
    assert public - top == set(), "missing from _strata.pyi"
    for name in sorted(public):
        obj = getattr(_strata, name)
        if not isinstance(obj, type) or issubclass(obj, BaseException):
            continue
        own = {n for n in vars(obj) if not n.startswith("_")}
        assert own - members(name) == set(), f"{name}: methods missing from _strata.pyi"


def test_the_package_exports_what_the_stubs_name():
    top, _ = stub_names()
    assert {n for n in top if not n.startswith("_")} <= set(strata.__all__)
