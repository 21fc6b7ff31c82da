"""The reader of a LaTeX document's expanded tokens: paragraphs under their section path,
formulas as LaTeX, theorem heads, lists, labels and references (see `latex.py`)."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import CorruptFileError, EmptyDocumentError
from ..types import Locator, Section
from . import latex_text as lt
from .latex_files import VERB, VERBATIM
from .latex_numbers import Numbering
from .markdown import slugify
from .parsed import ParsedDocument
from .tex_macros import Macro, argument, group, optional, skip_spaces, take_star
from .tex_tokens import PAR, SPACES, Tok, is_word, source

_REF = re.compile("\x00([^\x00]*)\x00")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$", re.DOTALL)


class Reader:
    """Turns the expanded tokens of a document into sections (one per paragraph)."""

    def __init__(self, name: str, macros: dict[str, Macro], verbatim: list[str]) -> None:
        self.name, self.macros, self.verbatim = name, macros, verbatim
        self.sections: list[Section] = []
        self.para: list[str] = []
        self.trail: list[tuple[int, str, str]] = []  # (level, path element, anchor)
        self.numbers = Numbering()
        self.language, self.title = "english", ""
        self.envs: list[tuple[str, Tok]] = []
        self.lists: list[list[int]] = []  # per open list: [numbered, items so far]
        self.labels: dict[str, str] = {}
        self.ref, self.naming = "", False  # what a \label names; the heading awaits one
        self.body, self.done, self.inline_depth = False, False, 0
        self.repairs: list[int] = []  # lines of formulas left open
        self.keep_lines = False  # in alltt: line breaks are kept

    def read(self, toks: list[Tok]) -> ParsedDocument:
        self.body = not any(t.text == "\\begin" and toks[i + 2].text == "document"
                            for i, t in enumerate(toks[:-2]))
        stack = toks[::-1]
        while stack and not self.done:
            self.token(stack.pop(), stack)
        if self.envs and self.envs[-1][0] != "document":
            name, at = self.envs[-1]
            raise CorruptFileError(f"{at.where()}: \\begin{{{name}}} is never closed")
        self.flush()
        sections = [Section(_REF.sub(lambda m: self.labels.get(m.group(1)) or m.group(1),
                                     s.text), s.path, s.locator) for s in self.sections]
        if not sections:
            raise EmptyDocumentError(f"{self.name}: no text", code="no_text", file=self.name)
        return ParsedDocument(title=self.title or Path(self.name).stem, sections=sections,
                              kind="prose")

    # -- output ------------------------------------------------------------------------

    def emit(self, text: str) -> None:
        self.para.append(text)
        if self.naming and text.strip():
            self.naming = False

    def flush(self) -> None:
        if self.inline_depth:
            self.para.append("\n\n" if self.keep_lines else " ")
            return
        raw = "".join(self.para).strip()
        self.para = []
        text = raw if raw.startswith("```") else " ".join(raw.split())
        if text:
            anchor = self.trail[-1][2] if self.trail else None
            self.sections.append(Section(text, tuple(e for _, e, _ in self.trail),
                                         Locator(anchor=anchor or None)))

    def inline(self, toks: list[Tok]) -> str:
        """Tokens rendered as one line of text (a heading, a theorem's note, a caption)."""
        return " ".join(self.inline_lines(toks).split())

    def inline_lines(self, toks: list[Tok]) -> str:
        """Tokens rendered as text outside the paragraph being written."""
        saved, body, naming = self.para, self.body, self.naming
        self.para, self.body = [], True
        self.inline_depth += 1
        stack = toks[::-1]
        while stack:
            self.token(stack.pop(), stack)
        self.inline_depth -= 1
        text = "".join(self.para)
        self.para, self.body, self.naming = saved, body, naming
        return text

    # -- tokens ------------------------------------------------------------------------

    def token(self, t: Tok, stack: list[Tok]) -> None:
        text = t.text
        if not self.body:
            self.preamble(t, stack)
        elif text == PAR or text == "\\par":
            self.flush()
        elif text in SPACES:
            self.emit(text if self.keep_lines else " ")
        elif text == "~":
            self.emit(" ")
        elif text in ("{", "}"):
            return
        elif text == "$":
            self.dollar(t, stack)
        elif text in ("\\(", "\\["):
            body = self.until(stack, t, "\\)" if text == "\\(" else "\\]")
            self.emit_math(body, text == "\\[")
        elif text == "&":
            self.emit(" | ")
        elif text == "\\\\":
            take_star(stack)
            optional(stack)
            self.emit(" ")
        elif text.startswith("\\"):
            self.command(t, stack)
        else:
            self.emit(lt.ligatures(text))

    def preamble(self, t: Tok, stack: list[Tok]) -> None:
        """Before \\begin{document}: the class, the language, the title, theorem kinds."""
        text = t.text
        if text == "\\documentclass":
            optional(stack)
            self.numbers.doc_class = source(group(stack, t)).strip()
        elif text == "\\usepackage":
            opts = optional(stack)
            names = [n.strip() for n in source(group(stack, t)).split(",")]
            if "babel" in names and opts:
                self.language = source(opts).split(",")[-1].split("=")[-1].strip()
        elif text in ("\\setmainlanguage", "\\selectlanguage"):
            optional(stack)
            self.language = source(group(stack, t)).strip()
        elif text == "\\title":
            optional(stack)
            self.title = self.inline(group(stack, t))
        elif text in ("\\newtheorem", "\\setcounter"):
            self.command(t, stack)
        elif text == "\\begin" and source(group(stack, t)).strip() == "document":
            self.body = True
            self.envs.append(("document", t))

    def command(self, t: Tok, stack: list[Tok]) -> None:
        name = t.text
        if name == "\\begin":
            self.begin(t, stack)
        elif name == "\\end":
            self.end(t, stack)
        elif name in lt.LEVELS:
            self.heading(t, stack)
        elif name == "\\item":
            self.item(t, stack)
        elif name == "\\label":
            self.label(source(group(stack, t)).strip())
        elif name in lt.REFS:
            take_star(stack)
            optional(stack)
            self.emit(f"\x00{source(group(stack, t)).strip()}\x00")
        elif name == "\\newtheorem":
            self.newtheorem(t, stack)
        elif name == "\\setcounter":
            counter, value = source(group(stack, t)).strip(), source(group(stack, t)).strip()
            if counter == "secnumdepth" and value.lstrip("-").isdigit():
                self.numbers.secnumdepth = int(value)
        elif name == "\\appendix":
            self.numbers.start_appendix()
        elif name == "\\frametitle":
            optional(stack)
            self.frame(self.inline(group(stack, t)))
        elif name == "\\caption":
            optional(stack)
            self.flush()
            self.emit(self.inline(group(stack, t)))
            self.flush()
        elif name in (VERBATIM, VERB):
            self.verbatim_text(name, int(source(group(stack, t))))
        elif name == "\\url":
            self.emit(source(group(stack, t)))
        elif name in lt.SYMBOLS:
            self.emit(lt.SYMBOLS[name])
        elif name in lt.CONTROL_SYMBOLS:
            self.emit("$" if self.keep_lines and name == "\\$" else lt.CONTROL_SYMBOLS[name])
        elif name in lt.ACCENTS:
            self.emit(lt.accented(name, self.inline(argument(stack, t))))
        elif name in lt.WRAPS:
            opening, closing = lt.WRAPS[name]
            optional(stack)
            optional(stack)
            inner = group(stack, t)
            stack.extend(reversed([Tok(opening, t.file, t.line), *inner,
                                   Tok(closing, t.file, t.line)]))
        elif name in lt.SILENT or name in lt.LAST_ONLY:
            self.drop_arguments(t, stack, lt.SILENT.get(name, lt.LAST_ONLY.get(name, 0)))
        elif name == "\\title":
            optional(stack)
            self.title = self.inline(group(stack, t))
        elif name in ("\\documentclass", "\\usepackage"):
            optional(stack)
            group(stack, t)
        elif is_word(name):
            self.unknown(stack)

    def drop_arguments(self, at: Tok, stack: list[Tok], count: int) -> None:
        take_star(stack)
        optional(stack)
        for _ in range(count):
            argument(stack, at)
            optional(stack)

    def unknown(self, stack: list[Tok]) -> None:
        """An unknown command prints nothing; its braced arguments print as text, its options
        (and, in a beamer deck, its overlay specification) do not."""
        self.overlay(stack)
        if stack and stack[-1].text == "[":
            optional(stack)

    def overlay(self, stack: list[Tok]) -> None:
        """Drop a beamer overlay specification (`<2->`) right after a command."""
        if stack and self.numbers.doc_class == "beamer" and (n := lt.overlay(stack[-1].text)):
            rest = stack.pop()
            if rest.text[n:]:
                stack.append(Tok(rest.text[n:], rest.file, rest.line))

    # -- maths -------------------------------------------------------------------------

    def dollar(self, at: Tok, stack: list[Tok]) -> None:
        """A formula in `$...$` or `$$...$$`; one left open ends where TeX would end it
        (a paragraph, a heading, an item, the end of its environment), and is noted."""
        display = bool(stack) and stack[-1].text == "$"
        if display:
            stack.pop()
        body: list[Tok] = []
        depth = 0
        while stack:
            t = stack.pop()
            depth += (t.text == "{") - (t.text == "}")
            if t.text == "$" and depth <= 0 and (not display or (stack and stack[-1].text == "$")):
                if display:
                    stack.pop()
                self.emit_math(body, display)
                return
            if self.ends_formula(t, stack):
                stack.append(t)
                self.repairs.append(at.line)
                self.emit_math(body, display)
                return
            body.append(t)
        raise CorruptFileError(f"{at.where()}: the formula opened here is never closed")

    def ends_formula(self, t: Tok, stack: list[Tok]) -> bool:
        """Whether `t` cannot be inside a formula (TeX closes an open one before it)."""
        if t.text in (PAR, "\\par", "\\item") or t.text in lt.LEVELS:
            return True
        open_envs = {name for name, _ in self.envs}
        return t.text == "\\end" and len(stack) >= 2 and stack[-2].text in open_envs

    def until(self, stack: list[Tok], at: Tok, closing: str) -> list[Tok]:
        body: list[Tok] = []
        while stack:
            t = stack.pop()
            if t.text == closing:
                return body
            body.append(t)
        raise CorruptFileError(f"{at.where()}: {at.text} is never closed by {closing}")

    def emit_math(self, body: list[Tok], display: bool, wrap: str = "") -> None:
        text = self.math(body)
        if wrap:
            text = f"\\begin{{{wrap}}}{text}\\end{{{wrap}}}"
        if text:
            self.emit(f" $${text}$$ " if display else f"${text}$")

    def math(self, toks: list[Tok]) -> str:
        """A formula's LaTeX: labels recorded and taken out, numbering switches dropped."""
        kept: list[Tok] = []
        stack = toks[::-1]
        while stack:
            t = stack.pop()
            if t.text == "\\label":
                self.labels.setdefault(source(group(stack, t)).strip(), "")
            elif t.text not in ("\\nonumber", "\\notag"):
                kept.append(Tok(" ", t.file, t.line) if t.text == PAR else t)
        return " ".join(source(kept).split())

    # -- structure ---------------------------------------------------------------------

    def heading(self, t: Tok, stack: list[Tok]) -> None:
        level = lt.LEVELS[t.text]
        star = take_star(stack)
        optional(stack)
        title = self.inline(group(stack, t))
        self.flush()
        number = "" if star else self.numbers.step(level)
        element = f"{number} {title}".strip()
        self.trail = [x for x in self.trail if x[0] < level] + [(level, element, _slug(title))]
        self.ref, self.naming = number, True

    def frame(self, title: str) -> None:
        self.trail = [x for x in self.trail if x[0] < lt.FRAME_LEVEL]
        if title:
            self.trail.append((lt.FRAME_LEVEL, title, _slug(title)))

    def label(self, key: str) -> None:
        self.labels[key] = self.ref
        if self.naming and self.trail:
            level, element, _ = self.trail[-1]
            self.trail[-1] = (level, element, key)
            self.naming = False

    def item(self, t: Tok, stack: list[Tok]) -> None:
        self.overlay(stack)
        label = optional(stack)
        self.flush()
        if label is not None:
            text = self.inline(label)
            self.emit(f"{text} " if text else "")
        elif self.lists and self.lists[-1][0]:
            self.lists[-1][1] += 1
            self.emit(f"{self.lists[-1][1]}. ")
        else:
            self.emit("- ")

    def newtheorem(self, t: Tok, stack: list[Tok]) -> None:
        star = take_star(stack)
        env = source(group(stack, t)).strip()
        shared = optional(stack)
        printed = self.inline(group(stack, t))
        parent = optional(stack)
        level = lt.LEVELS.get("\\" + source(parent).strip()) if parent else None
        self.numbers.define(env, printed, source(shared).strip() if shared else None, level,
                            not star)

    def theorem_head(self, env: str, note: str) -> str:
        printed, number = self.numbers.theorem(env)
        self.ref = number
        head = " ".join(x for x in (printed, number) if x)
        return f"{head} ({note}). " if note else f"{head}. "

    def proof_name(self) -> str:
        defined = self.macros.get("\\proofname")
        if defined is not None:
            return self.inline(list(defined.body))
        return lt.PROOF_NAMES.get(self.language, "Proof")

    # -- environments ------------------------------------------------------------------

    def is_frame(self, env: str) -> bool:
        return self.numbers.doc_class == "beamer" and env != "framed" and re.fullmatch(
            r"frame[a-z]?", env) is not None

    def begin(self, t: Tok, stack: list[Tok]) -> None:
        env = source(group(stack, t)).strip()
        if env in lt.MATH_ENVS:
            self.emit_math(self.collect(env, stack, t), True, lt.MATH_ENVS[env])
            return
        if env in lt.SKIPPED_ENVS:
            self.collect(env, stack, t)
            return
        if env == "alltt":
            self.code(self.collect(env, stack, t))
            return
        self.flush()
        self.envs.append((env, t))
        if self.numbers.is_theorem(env):
            note = optional(stack)
            self.emit(self.theorem_head(env, self.inline(note) if note else ""))
        elif env == "proof":
            note = optional(stack)
            self.emit(f"{self.inline(note) if note else self.proof_name()}. ")
        elif env in lt.LISTS:
            self.lists.append([int(env in ("enumerate", "compactenum")), 0])
            optional(stack)
        elif self.is_frame(env):
            self.frame_start(t, stack)
        else:
            optional(stack)
            for _ in range(lt.ENV_ARGS.get(env, 0)):
                argument(stack, t)

    def frame_start(self, t: Tok, stack: list[Tok]) -> None:
        self.overlay(stack)
        optional(stack)
        self.overlay(stack)
        skip_spaces(stack)
        title = self.inline(group(stack, t)) if stack and stack[-1].text == "{" else ""
        skip_spaces(stack)
        if stack and stack[-1].text == "{":
            group(stack, t)  # the subtitle
        self.frame(title)

    def end(self, t: Tok, stack: list[Tok]) -> None:
        env = source(group(stack, t)).strip()
        if not self.envs:
            raise CorruptFileError(f"{t.where()}: \\end{{{env}}} without a \\begin{{{env}}}")
        opened, at = self.envs.pop()
        if opened != env:
            raise CorruptFileError(f"{t.where()}: \\end{{{env}}} closes \\begin{{{opened}}} "
                                   f"of line {at.line}")
        self.flush()
        if env == "document":
            self.done = True
        elif env in lt.LISTS and self.lists:
            self.lists.pop()
        elif self.is_frame(env):
            self.frame("")

    def collect(self, env: str, stack: list[Tok], at: Tok) -> list[Tok]:
        """The tokens up to the `\\end{env}` closing this one (nested ones kept)."""
        body: list[Tok] = []
        depth = 0
        while stack:
            t = stack.pop()
            if t.text in ("\\begin", "\\end") and len(stack) >= 3 and stack[-2].text == env \
                    and stack[-1].text == "{":
                if t.text == "\\begin":
                    depth += 1
                elif depth == 0:
                    group(stack, t)
                    return body
                else:
                    depth -= 1
            body.append(t)
        raise CorruptFileError(f"{at.where()}: \\begin{{{env}}} is never closed")

    def code(self, toks: list[Tok]) -> None:
        """Program text (alltt): its commands expanded, its lines kept, as a code block."""
        self.keep_lines = True
        text = "\n".join(line.rstrip() for line in self.inline_lines(toks).split("\n"))
        self.keep_lines = False
        self.flush()
        self.para = [f"```\n{text.strip(chr(10))}\n```"]
        self.flush()

    def verbatim_text(self, kind: str, index: int) -> None:
        text = self.verbatim[index]
        if kind == VERB:
            self.emit(f"`{text}`")
            return
        self.flush()
        self.para = [f"```\n{text}\n```"]
        self.flush()


def _slug(title: str) -> str:
    return slugify(_MATH.sub(" ", title)).strip("-")


