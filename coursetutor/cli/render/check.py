"""The course health check in the terminal: a summary per document, then its weak spots."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from ...health import CourseCheck, DocumentCheck
from . import out

BAR = 10  # characters of a full bar


def _bar(share: float | None) -> str:
    if share is None:
        return "-"
    filled = round(share * BAR)
    return f"{'█' * filled}{'░' * (BAR - filled)} {share:.0%}"


def page_ranges(pages: list[int]) -> str:
    """'1-3, 7, 9-10' for pages 1, 2, 3, 7, 9, 10."""
    runs: list[list[int]] = []
    for page in sorted(pages):
        if runs and page == runs[-1][-1] + 1:
            runs[-1].append(page)
        else:
            runs.append([page])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def print_check(check: CourseCheck) -> None:
    """The summary table, then each document's sections with problems and flagged pages."""
    mode = "questions by the model, answered" if check.answered else "questions from headings"
    out.print(f"[bold]{escape(check.course)}[/bold]: course check ({mode}; found = in the "
              f"top {check.k}; {check.seconds:.1f} s)")
    columns = ["document", "sections", "found", "answer passed", "pages flagged"]
    if not check.answered:
        columns.remove("answer passed")
    table = Table(*columns)
    for d in check.documents:
        cells = [escape(d.title), str(len(d.sections)), _bar(d.found_share),
                 _bar(d.passed_share), str(d.pages_flagged)]
        if not check.answered:
            del cells[3]
        table.add_row(*cells)
    out.print(table)
    for d in check.documents:
        _print_problems(d)


def _print_problems(d: DocumentCheck) -> None:
    weak = [s for s in d.sections if s.problems]
    if not (weak or d.pages_flagged or d.unchecked):
        return
    out.print(f"\n[bold]{escape(d.title)}[/bold] ({escape(d.id)})")
    if d.no_text_pages:
        out.print(f"  pages without a text layer: {page_ranges(list(d.no_text_pages))}")
    by_reasons: dict[tuple[str, ...], list[int]] = {}
    for page, reasons in d.garbled_pages:
        by_reasons.setdefault(reasons, []).append(page)
    for reasons, pages in by_reasons.items():
        out.print(f"  pages that look garbled ({', '.join(reasons)}): {page_ranges(pages)}")
    for s in weak:
        where = f" ({s.locator})" if s.locator and s.locator not in s.name else ""
        rank = f"rank {s.rank}" if s.rank else "not found"
        out.print(f"  {escape(s.name)}{escape(where)}: {rank}; {escape('; '.join(s.problems))}"
                  f"\n    [dim]asked: {escape(s.question)}[/dim]")
    if d.unchecked:
        out.print(f"  [dim]{d.unchecked} more sections not checked (--sections)[/dim]")
