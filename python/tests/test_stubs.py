"""The type stubs (weft/__init__.pyi) name what the module has: every function, class, method and
property, and each function's and method's parameters."""

import ast
import inspect
from pathlib import Path

import weft

STUBS = ast.parse((Path(__file__).resolve().parents[1] / "weft" / "__init__.pyi").read_text())


def parameters(node):
    a = node.args
    return [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg != "self"]


def stub_members():
    functions = {n.name: n for n in STUBS.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: {m.name: m for m in n.body if isinstance(m, ast.FunctionDef)} for n in STUBS.body if isinstance(n, ast.ClassDef)}
    return functions, classes


def test_every_public_name_is_in_the_stubs():
    functions, classes = stub_members()
    for name in weft.__all__:
        value = getattr(weft, name)
        if inspect.isclass(value) and not issubclass(value, Exception):
            assert name in classes, name
            public = {m for m in dir(value) if not m.startswith("_")}
            assert public == set(classes[name]) - {"__init__"}, (name, public ^ (set(classes[name]) - {"__init__"}))
        elif callable(value) and not inspect.isclass(value):
            assert name in functions, name


def test_the_stubs_parameters_are_the_modules():
    functions, classes = stub_members()
    for name, node in functions.items():
        assert list(inspect.signature(getattr(weft, name)).parameters) == parameters(node), name
    for cls, methods in classes.items():
        for name, node in methods.items():
            target = getattr(weft, cls)
            member = target if name == "__init__" else getattr(target, name)
            if isinstance(member, property) or inspect.isdatadescriptor(member):
                continue
            params = [p for p in inspect.signature(member).parameters if p != "self"]
            assert params == parameters(node), (cls, name, params)
