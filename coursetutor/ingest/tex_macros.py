"""A LaTeX source's own macros: what `\\newcommand`, `\\def`, `\\let`, `\\DeclareMathOperator`
and `\\newenvironment` define is expanded where it is used, as TeX would (arguments in braces
or single tokens, an optional first argument with its default). `\\input`, `\\include` and
local packages are read through a callback, so that the reader decides which files may be read.

Definitions with delimited parameters (`\\def\\a#1.{...}`) are dropped and their macro left as
it stands; structural commands (`\\section`, `\\begin`, ...) are never redefined.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..errors import CorruptFileError
from .tex_tokens import Tok, source

COMMAND_DEFINERS = frozenset({"\\newcommand", "\\renewcommand", "\\providecommand",
                              "\\DeclareRobustCommand"})
DEF_DEFINERS = frozenset({"\\def", "\\gdef", "\\edef", "\\xdef"})
ENV_DEFINERS = frozenset({"\\newenvironment", "\\renewenvironment"})
OPERATOR_DEFINERS = frozenset({"\\DeclareMathOperator"})
DEFINERS = COMMAND_DEFINERS | DEF_DEFINERS | ENV_DEFINERS | OPERATOR_DEFINERS | {"\\let"}
PREFIXES = frozenset({"\\long", "\\protected", "\\global", "\\outer"})
INPUTS = frozenset({"\\input", "\\include", "\\subfile"})
PACKAGES = frozenset({"\\usepackage", "\\RequirePackage"})
PROTECTED = frozenset({
    "\\begin", "\\end", "\\part", "\\chapter", "\\section", "\\subsection", "\\subsubsection",
    "\\paragraph", "\\subparagraph", "\\item", "\\label", "\\ref", "\\eqref", "\\frametitle",
    "\\title", "\\documentclass", "\\newtheorem", "\\appendix", *DEFINERS, *INPUTS, *PACKAGES,
})
MAX_STEPS = 200_000  # expansions in one document
MAX_TOKENS = 4_000_000

# (command, name, where) -> the tokens of the file it names, or None to leave it out
Include = Callable[[str, str, Tok], "list[Tok] | None"]


@dataclasses.dataclass(frozen=True)
class Macro:
    params: int
    body: tuple[Tok, ...]
    default: tuple[Tok, ...] | None = None  # an optional first argument's default


@dataclasses.dataclass(frozen=True)
class Environment:
    params: int
    begin: tuple[Tok, ...]
    end: tuple[Tok, ...]
    default: tuple[Tok, ...] | None = None


class Expander:
    """Expands a token list's user macros and environments, reading definitions as it goes."""

    def __init__(self, include: Include | None = None) -> None:
        self.macros: dict[str, Macro] = {}
        self.environments: dict[str, Environment] = {}
        self.include = include
        self.steps = 0

    def expand(self, toks: list[Tok]) -> list[Tok]:
        """`toks` with every definition taken out and every use of one expanded."""
        stack = toks[::-1]
        out: list[Tok] = []
        while stack:
            t = stack.pop()
            if t.text in PREFIXES:
                continue
            if t.text in DEFINERS:
                self._define(t, stack)
            elif t.text in self.macros:
                self._call(t, self.macros[t.text], stack)
            elif t.text in ("\\begin", "\\end") and _peek_name(stack) in self.environments:
                self._environment(t, stack)
            elif t.text in INPUTS and self.include is not None:
                self._input(t, stack)
            elif t.text in PACKAGES and self.include is not None:
                out.append(t)
                self._packages(t, stack, out)
            else:
                out.append(t)
                if len(out) > MAX_TOKENS:
                    raise CorruptFileError(f"{t.where()}: the document expands without end")
        return out

    def _step(self, at: Tok, size: int) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS or size > MAX_TOKENS:
            raise CorruptFileError(
                f"{at.where()}: {at.text} expands without end (a macro that uses itself?)")

    def _call(self, at: Tok, macro: Macro, stack: list[Tok]) -> None:
        self._step(at, len(stack))
        args = _arguments(macro.default, macro.params, stack, at)
        stack.extend(reversed(substitute(macro.body, args, at)))

    def _environment(self, at: Tok, stack: list[Tok]) -> None:
        name = source(group(stack, at)).strip()
        env = self.environments[name]
        self._step(at, len(stack))
        if at.text == "\\end":
            stack.extend(reversed(substitute(env.end, [], at)))
            return
        args = _arguments(env.default, env.params, stack, at)
        stack.extend(reversed(substitute(env.begin, args, at)))

    def _input(self, at: Tok, stack: list[Tok]) -> None:
        skip_spaces(stack)
        if stack and stack[-1].text == "{":
            name = source(group(stack, at)).strip()
        else:
            name = stack.pop().text if stack else ""
        if not name:
            raise CorruptFileError(f"{at.where()}: {at.text} names no file")
        assert self.include is not None
        found = self.include(at.text, name, at)
        if found:
            self._step(at, len(stack) + len(found))
            stack.extend(reversed(found))

    def _packages(self, at: Tok, stack: list[Tok], out: list[Tok]) -> None:
        """`\\usepackage[opts]{a,b}` stays for the reader; a package found beside the source
        is read (its definitions count), the others are left alone."""
        skip_spaces(stack)
        opts = optional(stack)
        if opts is not None:
            out.extend([Tok("[", at.file, at.line), *opts, Tok("]", at.file, at.line)])
        names = group(stack, at)
        out.extend([Tok("{", at.file, at.line), *names, Tok("}", at.file, at.line)])
        assert self.include is not None
        for name in reversed(source(names).split(",")):
            found = self.include(at.text, name.strip(), at) if name.strip() else None
            if found:
                self._step(at, len(stack) + len(found))
                stack.extend(reversed(found))

    def _define(self, at: Tok, stack: list[Tok]) -> None:
        if at.text in COMMAND_DEFINERS:
            self._command(at, stack)
        elif at.text in DEF_DEFINERS:
            self._def(at, stack)
        elif at.text == "\\let":
            self._let(at, stack)
        elif at.text in OPERATOR_DEFINERS:
            star = take_star(stack)
            name = command_name(stack, at)
            text = group(stack, at)
            body = [Tok("\\operatorname", at.file, at.line)]
            if star:
                body.append(Tok("*", at.file, at.line))
            body += [Tok("{", at.file, at.line), *text, Tok("}", at.file, at.line)]
            self._set(name, Macro(0, tuple(body)))
        else:
            take_star(stack)
            name = source(group(stack, at)).strip()
            params, default = signature(stack, at)
            begin, end = group(stack, at), group(stack, at)
            self.environments[name] = Environment(params, tuple(begin), tuple(end), default)

    def _command(self, at: Tok, stack: list[Tok]) -> None:
        take_star(stack)
        name = command_name(stack, at)
        params, default = signature(stack, at)
        body = argument(stack, at)
        if at.text == "\\providecommand" and name in self.macros:
            return
        self._set(name, Macro(params, tuple(body), default))

    def _def(self, at: Tok, stack: list[Tok]) -> None:
        name = command_name(stack, at)
        params: list[str] = []
        while stack and stack[-1].text != "{":
            t = stack.pop()
            if not t.is_space:
                params.append(t.text)
        body = group(stack, at)
        expected = [f"#{i}" for i in range(1, len(params) + 1)]
        if params == expected:  # delimited parameters are beyond this reader: left alone
            self._set(name, Macro(len(params), tuple(body)))

    def _let(self, at: Tok, stack: list[Tok]) -> None:
        name = command_name(stack, at)
        skip_spaces(stack)
        if stack and stack[-1].text == "=":
            stack.pop()
            skip_spaces(stack)
        if not stack:
            raise CorruptFileError(f"{at.where()}: \\let {name} has no meaning")
        target = stack.pop()
        if target.text == name:
            return
        self._set(name, self.macros.get(target.text, Macro(0, (target,))))

    def _set(self, name: str, macro: Macro) -> None:
        if name not in PROTECTED:
            self.macros[name] = macro


def substitute(body: tuple[Tok, ...], args: list[tuple[Tok, ...]], at: Tok) -> list[Tok]:
    """`body` with `#1`..`#9` replaced by the arguments, placed where the macro was used."""
    out: list[Tok] = []
    for t in body:
        if t.text.startswith("##"):
            out.append(Tok(t.text[1:], at.file, at.line))
        elif t.text.startswith("#") and t.text[1:].isdigit():
            k = int(t.text[1:])
            if k > len(args):
                raise CorruptFileError(f"{at.where()}: {at.text} uses #{k} but takes "
                                       f"{len(args)} argument(s)")
            out.extend(args[k - 1])
        else:
            out.append(Tok(t.text, at.file, at.line))
    return out


def skip_spaces(stack: list[Tok]) -> None:
    while stack and stack[-1].is_space:
        stack.pop()


def take_star(stack: list[Tok]) -> bool:
    if stack and stack[-1].text == "*":
        stack.pop()
        return True
    return False


def group(stack: list[Tok], at: Tok) -> list[Tok]:
    """The content of the braced group next on `stack` (spaces before it skipped)."""
    skip_spaces(stack)
    if not stack or stack[-1].text != "{":
        raise CorruptFileError(f"{at.where()}: {at.text} expects an argument in braces")
    opening = stack.pop()
    depth, out = 1, list[Tok]()
    while stack:
        t = stack.pop()
        if t.text == "{":
            depth += 1
        elif t.text == "}":
            depth -= 1
            if depth == 0:
                return out
        out.append(t)
    raise CorruptFileError(f"{opening.where()}: '{{' is never closed")


def argument(stack: list[Tok], at: Tok) -> list[Tok]:
    """One undelimited argument: a braced group or a single token (one character of a run)."""
    skip_spaces(stack)
    if not stack or stack[-1].text == "}":
        raise CorruptFileError(f"{at.where()}: {at.text} is missing an argument")
    if stack[-1].text == "{":
        return group(stack, at)
    t = stack.pop()
    if len(t.text) > 1 and not t.text.startswith("\\") and not t.text.startswith("#"):
        stack.append(Tok(t.text[1:], t.file, t.line))
        return [Tok(t.text[0], t.file, t.line)]
    return [t]


def optional(stack: list[Tok]) -> list[Tok] | None:
    """The content of an optional `[...]` argument next on `stack`, else None."""
    i = len(stack) - 1
    while i >= 0 and stack[i].is_space:
        i -= 1
    if i < 0 or stack[i].text != "[":
        return None
    del stack[i:]
    depth, out = 0, list[Tok]()
    while stack:
        t = stack.pop()
        if t.text == "{":
            depth += 1
        elif t.text == "}":
            depth -= 1
        elif t.text == "]" and depth == 0:
            return out
        out.append(t)
    raise CorruptFileError(f"{out[0].where() if out else 'end'}: '[' is never closed")


def command_name(stack: list[Tok], at: Tok) -> str:
    """The command a definition defines: `\\name` or `{\\name}`."""
    skip_spaces(stack)
    if stack and stack[-1].text == "{":
        inner = [t for t in group(stack, at) if not t.is_space]
        if len(inner) == 1 and inner[0].text.startswith("\\"):
            return inner[0].text
    elif stack and stack[-1].text.startswith("\\"):
        return stack.pop().text
    raise CorruptFileError(f"{at.where()}: cannot read the name {at.text} defines")


def signature(stack: list[Tok], at: Tok) -> tuple[int, tuple[Tok, ...] | None]:
    """A definition's `[n]` parameter count and `[default]` of its first parameter."""
    count = optional(stack)
    if count is None:
        return 0, None
    text = source(count).strip()
    if not text.isdigit() or not 0 <= int(text) <= 9:
        raise CorruptFileError(f"{at.where()}: {at.text} takes 0 to 9 parameters, not {text!r}")
    default = optional(stack)
    return int(text), None if default is None else tuple(default)


def _peek_name(stack: list[Tok]) -> str:
    """The environment name of a `\\begin{name}` / `\\end{name}` next on the stack."""
    if len(stack) >= 3 and stack[-1].text == "{" and stack[-3].text == "}":
        return stack[-2].text
    return ""


def _arguments(default: tuple[Tok, ...] | None, params: int, stack: list[Tok],
               at: Tok) -> list[tuple[Tok, ...]]:
    """The arguments a macro or environment takes from `stack`: its optional first one
    (`default` when not given), then the rest up to `params`."""
    args: list[tuple[Tok, ...]] = []
    if default is not None:
        given = optional(stack)
        args.append(default if given is None else tuple(given))
    while len(args) < params:
        args.append(tuple(argument(stack, at)))
    return args
