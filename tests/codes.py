"""Every code the server can send for a page to translate, read from the code itself: the
exception tree's class codes, the codes raise sites and report lines name (`code="..."`,
`"code": "..."`), the HTTP layer's own and the jobs' errors; with the params each sends."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

from coursetutor import errors
from coursetutor.api.encode import JOB_ERRORS
from coursetutor.api.errors import PLAIN_CODES
from coursetutor.api.validate import VALIDATION

PACKAGE = Path(errors.__file__).resolve().parent


def error_classes(cls: type[errors.CoursetutorError] = errors.CoursetutorError,
                  ) -> Iterator[type[errors.CoursetutorError]]:
    """`cls` and every class under it in the exception tree."""
    yield cls
    for sub in cls.__subclasses__():
        yield from error_classes(sub)


def _strings(node: ast.expr) -> list[str]:
    """The strings a code expression can take (`"a"`, `"a" if x else "b"`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _strings(node.body) + _strings(node.orelse)
    return []


def _keys(node: ast.expr | None) -> set[str]:
    if not isinstance(node, ast.Dict):
        return set()
    return {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def _sites(tree: ast.AST) -> Iterator[tuple[list[str], set[str]]]:
    """(codes, params) of each call with `code=...` and each dict with a "code" entry."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            named = {k.arg: k.value for k in node.keywords if k.arg}
            if "code" in named and _strings(named["code"]):
                params = (_keys(named["params"]) if "params" in named
                          else set(named) - {"code"})
                yield _strings(named["code"]), params
        elif isinstance(node, ast.Dict):
            entries = {k.value: v for k, v in zip(node.keys, node.values, strict=True)
                       if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            code = entries.get("code")
            if isinstance(code, ast.Constant) and isinstance(code.value, str):
                yield [code.value], _keys(entries.get("params"))


@functools.cache
def named_codes() -> dict[str, set[str]]:
    """Each code a raise site or report line names, with the params every such site sends."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for codes, params in _sites(ast.parse(path.read_text(encoding="utf-8"))):
            for code in codes:
                found[code] = found[code] & params if code in found else set(params)
    return found


def server_codes() -> dict[str, set[str]]:
    """Every code the server can send, with the params it always sends along (none for a
    class's code: an error raised without a code of its own names nothing); a fresh copy."""
    codes = {code: set() for code in PLAIN_CODES}
    codes[VALIDATION] = {"fields"}  # validate.describe: the names of the refused fields
    codes.update({code: set() for code in JOB_ERRORS.values()})
    codes.update({errors.class_code(cls): set() for cls in error_classes()})
    for code, params in named_codes().items():
        codes[code] = codes[code] & params if code in codes else set(params)
    return codes
