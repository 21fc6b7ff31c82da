"""Build lecture-02-convergence.pdf for the coursetutor sample course.

Run from anywhere:

    python coursetutor/sample_course/build_pdf.py

The output is deterministic (fixed creation date, no random identifiers), so
running the script twice produces byte-identical files. Only the core font
Helvetica (plus Courier for displayed formulas) and latin-1 text are used.
Requires fpdf2.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF
from fpdf.enums import XPos, YPos

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "lecture-02-convergence.pdf"

HEADER_TEXT = "Numerical Methods 101 - Lecture 2"
FIXED_DATE = datetime(2026, 1, 1, tzinfo=UTC)
LINE_H = 5.4

# ---------------------------------------------------------------------------
# Content. Each inner list is one page; a block is (kind, payload) with kind
# one of: "title", "h1", "h2", "p", "formula", "table", "caption".
# All numbers in the tables were computed in double precision.
# ---------------------------------------------------------------------------

PAGES: list[list[tuple[str, object]]] = [
    # ---------------------------------------------------------------- page 1
    [
        ("title", "Lecture 2: Convergence of iterative methods"),
        ("p",
         "In Lecture 1 we met three algorithms for solving f(x) = 0: bisection, "
         "Newton's method and the secant method. We saw that they approach the "
         "root at very different speeds. In this lecture we make the notion of "
         "speed precise. We first look at fixed-point iteration, a general "
         "framework that contains Newton's method as a special case, and we "
         "prove when it converges. Then we define the order of convergence "
         "(linear, superlinear, quadratic), measure it in error tables, compare "
         "the three methods, and finish with multiple roots, the one situation "
         "in which Newton's method loses its quadratic speed."),
        ("h1", "1 Fixed-point iteration"),
        ("h2", "1.1 From f(x) = 0 to x = g(x)"),
        ("p",
         "A fixed point of a function g is a number r with g(r) = r. Any "
         "root-finding problem can be rewritten as a fixed-point problem, and "
         "usually in many different ways. For example, the equation x^2 = 2 "
         "(that is, f(x) = x^2 - 2 = 0) is equivalent, for x > 0, to each of "
         "the following fixed-point equations:"),
        ("formula", "g1(x) = 2 / x"),
        ("formula", "g2(x) = x - (x^2 - 2) / 4"),
        ("formula", "g3(x) = (x + 2 / x) / 2"),
        ("p",
         "All three functions have the fixed point r = sqrt(2) = 1.41421356..., "
         "because at r = sqrt(2) each right-hand side equals sqrt(2). Choosing "
         "g is a design decision, and as we will see it completely determines "
         "whether and how fast the method converges."),
        ("h2", "1.2 The iteration"),
        ("p",
         "Fixed-point iteration starts from a guess x_0 and repeats"),
        ("formula", "x_{n+1} = g(x_n),   n = 0, 1, 2, ..."),
        ("p",
         "If g is continuous and the sequence converges to some limit r, then "
         "taking limits on both sides gives r = g(r), so the limit is a fixed "
         "point. The three choices above behave very differently from x_0 = 1. "
         "With g1 the iterates are 1, 2, 1, 2, ...: the sequence cycles and "
         "never converges. With g2 they are 1, 1.25, 1.359375, 1.3974, "
         "1.4092, ... and converge slowly, gaining about half a digit per step. "
         "With g3 they are 1, 1.5, 1.41667, 1.4142157, ...: this is exactly "
         "Newton's method from Lecture 1 and it converges extremely fast. The "
         "next section explains the difference."),
    ],
    # ---------------------------------------------------------------- page 2
    [
        ("h1", "2 The contraction mapping condition"),
        ("h2", "2.1 Contractions"),
        ("p",
         "A function g is called a contraction on an interval [a, b] if there "
         "is a constant L < 1 such that |g(x) - g(y)| <= L |x - y| for all x "
         "and y in [a, b]. Applying a contraction brings any two points closer "
         "together by at least the factor L. If g is differentiable, the mean "
         "value theorem gives g(x) - g(y) = g'(c)(x - y) for some c between x "
         "and y, so the practical test is: g is a contraction if |g'(x)| <= "
         "L < 1 for all x in [a, b]."),
        ("h2", "2.2 The fixed-point theorem"),
        ("p",
         "Theorem (contraction mapping). Suppose g maps [a, b] into itself and "
         "|g'(x)| <= L < 1 for all x in [a, b]. Then (i) g has exactly one "
         "fixed point r in [a, b]; (ii) the iteration x_{n+1} = g(x_n) "
         "converges to r for every starting value x_0 in [a, b]; and (iii) the "
         "errors satisfy the bounds"),
        ("formula", "|x_n - r| <= L^n |x_0 - r|"),
        ("formula", "|x_n - r| <= L / (1 - L) * |x_n - x_{n-1}|"),
        ("p",
         "Proof sketch. By the mean value theorem, x_{n+1} - r = g(x_n) - g(r) "
         "= g'(c_n)(x_n - r), hence |x_{n+1} - r| <= L |x_n - r|, and the first "
         "bound follows by induction. Because L < 1, L^n tends to 0 and the "
         "iteration converges. The second bound is an a posteriori estimate: "
         "it uses only computed quantities, so it can serve as a stopping "
         "criterion. Existence follows from the intermediate value theorem "
         "applied to g(x) - x, and uniqueness from the contraction property: "
         "two fixed points r and s would give |r - s| <= L |r - s|, so r = s."),
        ("h2", "2.3 Local version and examples"),
        ("p",
         "Often we only know the behaviour near the fixed point. If g' is "
         "continuous and |g'(r)| < 1, then g is a contraction on a small "
         "interval around r, so the iteration converges for x_0 close enough "
         "to r: r is an attracting fixed point. If |g'(r)| > 1 the fixed point "
         "is repelling and the iterates move away from it. The case "
         "|g'(r)| = 1 is undecided by this test."),
        ("p",
         "Example: g(x) = cos(x) on [0, 1]. It maps [0, 1] into [cos(1), 1] = "
         "[0.5403, 1], which lies inside [0, 1], and |g'(x)| = |sin(x)| <= "
         "sin(1) = 0.8415 < 1. So x_{n+1} = cos(x_n) converges from any x_0 in "
         "[0, 1] to the unique solution r = 0.7390851332 of cos(x) = x. For the "
         "square-root example: g1'(x) = -2/x^2 gives |g1'(sqrt(2))| = 1, the "
         "borderline case, and indeed the iteration cycles; g2'(x) = 1 - x/2 "
         "gives |g2'(sqrt(2))| = 0.2929 < 1, so g2 converges; and g3'(sqrt(2)) "
         "= 0, which is the best possible case."),
    ],
    # ---------------------------------------------------------------- page 3
    [
        ("h1", "3 Order of convergence"),
        ("h2", "3.1 Definitions"),
        ("p",
         "Let x_n be a sequence converging to r and let e_n = |x_n - r| be the "
         "error. We classify the speed of convergence by how e_{n+1} compares "
         "with e_n when n is large."),
        ("p",
         "Linear convergence: lim e_{n+1} / e_n = C with 0 < C < 1. The "
         "constant C is the rate (or asymptotic error constant). Each step "
         "multiplies the error by about C, so we gain a fixed number of "
         "correct digits per step, namely -log10(C). Bisection is linear "
         "with C = 1/2 (about 0.3 digits per step); fixed-point iteration "
         "with cos(x) is linear with C = 0.674."),
        ("p",
         "Superlinear convergence: lim e_{n+1} / e_n = 0. The error shrinks "
         "by an ever larger factor. The secant method is superlinear."),
        ("p",
         "Convergence of order p (p > 1): lim e_{n+1} / e_n^p = C with "
         "0 < C < infinity. The case p = 2 is called quadratic convergence, "
         "and then the number of correct digits roughly doubles each step. "
         "Newton's method at a simple root has order 2; the secant method has "
         "order p = (1 + sqrt(5)) / 2 = 1.618. Any order p > 1 implies "
         "superlinear convergence."),
        ("h2", "3.2 Order of a fixed-point iteration"),
        ("p",
         "Expand g around the fixed point with Taylor's theorem: x_{n+1} - r = "
         "g(x_n) - g(r) = g'(r) (x_n - r) + g''(c_n) (x_n - r)^2 / 2. If "
         "g'(r) is not zero and |g'(r)| < 1, the first term dominates and the "
         "convergence is linear with rate C = |g'(r)|. If g'(r) = 0 and "
         "g''(r) is not zero, the second term dominates and the convergence is "
         "quadratic with C = |g''(r)| / 2. In general, if g'(r) = ... = "
         "g^(p-1)(r) = 0 and g^(p)(r) is not zero, the order is exactly p."),
        ("p",
         "Newton's method is the fixed-point iteration with g(x) = x - f(x) / "
         "f'(x). Differentiating gives g'(x) = f(x) f''(x) / f'(x)^2. At a "
         "simple root f(r) = 0 and f'(r) is not zero, so g'(r) = 0: this is "
         "the real reason why Newton's method converges quadratically."),
        ("h2", "3.3 Measuring the order from data"),
        ("p",
         "When the exact root is known (or a very accurate approximation of "
         "it), the order can be estimated from three consecutive errors:"),
        ("formula", "p ~ log(e_{n+1} / e_n) / log(e_n / e_{n-1})"),
        ("p",
         "For Newton's method on x^2 - 2 from x_0 = 1 this gives 2.26, 1.98 "
         "and 2.00 on successive triples, confirming p = 2. For the iteration "
         "x_{n+1} = cos(x_n) the estimates oscillate around 1 (1.14, 0.92, "
         "1.06, 0.96, 1.03), as expected for linear convergence."),
    ],
    # ---------------------------------------------------------------- page 4
    [
        ("h1", "4 Error tables"),
        ("p",
         "Error tables are the most direct way to see the order of convergence "
         "in practice. For a linear method the ratio e_{n+1} / e_n settles "
         "down to a constant; for a quadratic method the ratio "
         "e_{n+1} / e_n^2 does. The tables below were computed in double "
         "precision. To save space some tables show only every second "
         "iterate; the ratio column always compares e_n with the error of the "
         "immediately preceding iterate."),
        ("h2", "4.1 Linear convergence: x_{n+1} = cos(x_n)"),
        ("table", {
            "widths": [15, 45, 40, 40],
            "rows": [
                ["n", "x_n", "e_n", "e_n / e_{n-1}"],
                ["0", "1.0000000000", "2.61e-1", "-"],
                ["2", "0.8575532158", "1.18e-1", "0.596"],
                ["4", "0.7934803587", "5.44e-2", "0.641"],
                ["6", "0.7639596829", "2.49e-2", "0.660"],
                ["8", "0.7504177618", "1.13e-2", "0.667"],
                ["10", "0.7442373549", "5.15e-3", "0.671"],
            ],
        }),
        ("p",
         "The ratios approach |g'(r)| = sin(0.7390851) = 0.674, exactly as the "
         "theory predicts. About 0.17 correct digits are gained per step, so "
         "ten steps give fewer than three correct digits."),
        ("h2", "4.2 Linear convergence: g2(x) = x - (x^2 - 2) / 4"),
        ("table", {
            "widths": [15, 45, 40, 40],
            "rows": [
                ["n", "x_n", "e_n", "e_n / e_{n-1}"],
                ["1", "1.2500000000", "1.64e-1", "0.396"],
                ["2", "1.3593750000", "5.48e-2", "0.334"],
                ["4", "1.4092182806", "5.00e-3", "0.297"],
                ["6", "1.4137826681", "4.31e-4", "0.293"],
                ["8", "1.4141765799", "3.70e-5", "0.2929"],
                ["10", "1.4142103896", "3.17e-6", "0.2929"],
            ],
        }),
        ("p",
         "Here the rate is |g2'(sqrt(2))| = 1 - sqrt(2)/2 = 0.2929: faster than "
         "bisection (rate 0.5), but still linear."),
        ("h2", "4.3 Quadratic convergence: Newton's method for sqrt(2)"),
        ("table", {
            "widths": [15, 55, 35, 35],
            "rows": [
                ["n", "x_n", "e_n", "e_n / e_{n-1}^2"],
                ["0", "1", "4.14e-1", "-"],
                ["1", "1.5", "8.58e-2", "0.500"],
                ["2", "1.4166666666666667", "2.45e-3", "0.3333"],
                ["3", "1.4142156862745099", "2.12e-6", "0.3529"],
                ["4", "1.4142135623746899", "1.59e-12", "0.3535"],
            ],
        }),
        ("p",
         "The ratio e_n / e_{n-1}^2 tends to |f''(r) / (2 f'(r))| = "
         "1 / (2 sqrt(2)) = 0.3536, the asymptotic error constant of Newton's "
         "method for this problem. In four steps the error drops from 0.4 to "
         "about 1e-12."),
    ],
    # ---------------------------------------------------------------- page 5
    [
        ("h1", "5 Comparison of bisection, Newton and secant"),
        ("h2", "5.1 The same problem, three methods"),
        ("p",
         "We solve x^2 - 2 = 0 with bisection on [1, 2], Newton's method from "
         "x_0 = 1, and the secant method from x_0 = 1, x_1 = 2. The table "
         "lists the error after n iterations (for bisection, of the n-th "
         "midpoint c_n)."),
        ("table", {
            "widths": [15, 45, 45, 45],
            "rows": [
                ["n", "Bisection", "Newton", "Secant"],
                ["1", "8.58e-2", "8.58e-2", "5.86e-1"],
                ["2", "1.64e-1", "2.45e-3", "8.09e-2"],
                ["3", "3.92e-2", "2.12e-6", "1.42e-2"],
                ["4", "2.33e-2", "1.59e-12", "4.21e-4"],
                ["5", "7.96e-3", "< 1e-15", "2.12e-6"],
                ["6", "7.66e-3", "< 1e-15", "3.16e-10"],
                ["7", "1.51e-4", "< 1e-15", "2.2e-16"],
            ],
        }),
        ("p",
         "Three patterns are visible. Bisection's error is not even monotone "
         "(it grows from step 1 to step 2), but it always respects the bound "
         "(b - a) / 2^n, and it would need about 50 steps to reach full double "
         "precision. Newton's method doubles the number of correct digits "
         "each step. The secant method starts worse, but from step 3 on the "
         "number of correct digits grows by a factor of about 1.6 per step."),
        ("h2", "5.2 Cost per step and efficiency"),
        ("p",
         "Counting iterations is not quite fair, because the methods do "
         "different amounts of work per iteration. Bisection and secant need "
         "one new value of f per step; Newton needs f and f'. If evaluating "
         "f' costs about as much as evaluating f, then one Newton step costs "
         "two units of work, and per unit of work Newton's order is "
         "2^(1/2) = 1.414. The secant method's order per unit of work is "
         "1.618, so it is often faster in practice, and it does not require a "
         "formula for the derivative at all."),
        ("h2", "5.3 Summary of properties"),
        ("table", {
            "widths": [30, 35, 30, 30, 45],
            "rows": [
                ["Method", "Order", "f-evals/step", "Bracket?", "Convergence"],
                ["Bisection", "1 (C = 1/2)", "1", "yes", "global, guaranteed"],
                ["Newton", "2", "2 (f, f')", "no", "local only"],
                ["Secant", "1.618", "1", "no", "local only"],
                ["Fixed point", "1 if g'(r) != 0", "1 (g)", "no", "if |g'(r)| < 1"],
            ],
        }),
        ("p",
         "Reliability and speed pull in opposite directions. Bisection is the "
         "only method with a guarantee, Newton and secant are the fast ones. "
         "Production solvers such as Brent's method therefore keep a bracket "
         "and switch between bisection and secant-like steps."),
    ],
    # ---------------------------------------------------------------- page 6
    [
        ("h1", "6 Multiple roots"),
        ("h2", "6.1 Multiplicity"),
        ("p",
         "A root r of f has multiplicity m if f(r) = f'(r) = ... = "
         "f^(m-1)(r) = 0 but f^(m)(r) is not zero. Equivalently f(x) = "
         "(x - r)^m h(x) with h(r) not zero. A simple root has m = 1; a double "
         "root has m = 2. For example f(x) = x^3 - 3x + 2 = (x - 1)^2 (x + 2) "
         "has a double root at x = 1 and a simple root at x = -2. At a double "
         "root the graph touches the x-axis without crossing it, so there is "
         "no sign change and bisection cannot even be started."),
        ("h2", "6.2 Why Newton's method becomes linear"),
        ("p",
         "Write f(x) = (x - r)^m h(x). Then the Newton function g(x) = x - "
         "f(x) / f'(x) becomes g(x) = x - (x - r) h(x) / (m h(x) + (x - r) "
         "h'(x)), and differentiating at the root gives"),
        ("formula", "g'(r) = 1 - 1/m"),
        ("p",
         "For m = 1 this is 0 and we recover quadratic convergence. For m >= 2 "
         "it is not zero, so by Section 3.2 Newton's method converges only "
         "linearly, with rate C = (m - 1) / m: 1/2 for a double root, 2/3 for "
         "a triple root. Intuitively, near a multiple root f' also tends to "
         "zero, so the tangent becomes flat and each Newton step covers only "
         "a fraction 1/m of the remaining distance."),
        ("table", {
            "widths": [15, 45, 40, 40],
            "rows": [
                ["n", "x_n (Newton, x_0 = 2)", "e_n", "e_n / e_{n-1}"],
                ["1", "1.5555555556", "5.56e-1", "0.556"],
                ["2", "1.2979066023", "2.98e-1", "0.536"],
                ["4", "1.0795622104", "7.96e-2", "0.512"],
                ["6", "1.0202768098", "2.03e-2", "0.503"],
                ["8", "1.0050947411", "5.09e-3", "0.501"],
                ["10", "1.0012753050", "1.28e-3", "0.500"],
            ],
        }),
        ("caption",
         "Newton's method on f(x) = x^3 - 3x + 2 near the double root r = 1: "
         "the ratios approach 1/2, i.e. linear convergence."),
        ("h2", "6.3 Remedies"),
        ("p",
         "If the multiplicity m is known, the modified Newton iteration "
         "x_{n+1} = x_n - m f(x_n) / f'(x_n) restores quadratic convergence: "
         "for the example above with m = 2 the errors are 1.1e-1, 1.9e-3, "
         "6.3e-7 and 1.6e-10. If m is unknown, one can apply Newton's method "
         "to u(x) = f(x) / f'(x), which has only simple roots. Note also that "
         "multiple roots are ill-conditioned: near a double root f is so flat "
         "that rounding errors in f(x) hide the root, and in double precision "
         "only about 8 correct digits can be expected."),
    ],
]


class LecturePDF(FPDF):
    """FPDF with the running header and page-number footer of the course."""

    def header(self) -> None:
        self.set_font("Helvetica", "I", 9)
        self.set_text_color(90, 90, 90)
        self.cell(0, 6, HEADER_TEXT, align="L")
        self.ln(4)
        self.set_draw_color(160, 160, 160)
        self.line(self.l_margin, self.get_y() + 2, self.w - self.r_margin, self.get_y() + 2)
        self.ln(8)
        self.set_text_color(0, 0, 0)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("Helvetica", "", 9)
        self.set_text_color(90, 90, 90)
        self.cell(0, 8, f"Page {self.page_no()}", align="C")
        self.set_text_color(0, 0, 0)


def _table(pdf: FPDF, spec: dict) -> None:
    widths = spec["widths"]
    left = pdf.l_margin + 5
    for i, row in enumerate(spec["rows"]):
        pdf.set_x(left)
        pdf.set_font("Helvetica", "B" if i == 0 else "", 9.5)
        for w, cell in zip(widths, row, strict=True):
            pdf.cell(w, 5.6, cell, border=1, align="C")
        pdf.ln(5.6)
    pdf.ln(2)


def _mc(pdf: FPDF, h: float, text: str, align: str = "L") -> None:
    pdf.multi_cell(0, h, text, align=align, new_x=XPos.LMARGIN, new_y=YPos.NEXT)


def render(pdf: FPDF, kind: str, payload: object) -> None:
    if kind == "title":
        pdf.set_font("Helvetica", "B", 17)
        _mc(pdf, 9, str(payload), "L")
        pdf.ln(1)
        pdf.set_font("Helvetica", "", 10)
        _mc(pdf, 5, "Numerical Methods 101: Finding Roots of Equations", "L")
        pdf.ln(3)
    elif kind == "h1":
        pdf.ln(1)
        pdf.set_font("Helvetica", "B", 14)
        _mc(pdf, 8, str(payload), "L")
        pdf.ln(1)
    elif kind == "h2":
        pdf.ln(0.5)
        pdf.set_font("Helvetica", "B", 11.5)
        _mc(pdf, 6.5, str(payload), "L")
    elif kind == "p":
        pdf.set_font("Helvetica", "", 10.5)
        _mc(pdf, LINE_H, str(payload), "J")
        pdf.ln(1.8)
    elif kind == "formula":
        pdf.set_font("Courier", "", 10.5)
        pdf.set_x(pdf.l_margin + 12)
        _mc(pdf, LINE_H + 0.4, str(payload), "L")
        pdf.ln(1)
    elif kind == "caption":
        pdf.set_font("Helvetica", "I", 9.5)
        _mc(pdf, 5, str(payload), "L")
        pdf.ln(1.5)
    elif kind == "table":
        _table(pdf, payload)  # type: ignore[arg-type]
    else:  # pragma: no cover - programming error
        raise ValueError(f"unknown block kind {kind!r}")


def build(output: Path = OUTPUT) -> Path:
    pdf = LecturePDF(format="A4")
    pdf.set_margins(20, 15, 20)
    pdf.set_auto_page_break(auto=True, margin=20)
    pdf.set_title("Lecture 2: Convergence of iterative methods")
    pdf.set_author("coursetutor sample course")
    pdf.set_subject("Numerical Methods 101 - fixed-point iteration, order of convergence")
    pdf.set_keywords(
        "fixed-point iteration, contraction, order of convergence, Newton, secant, bisection, "
        "multiple roots"
    )
    pdf.set_creator("coursetutor/sample_course/build_pdf.py")
    pdf.set_lang("en")
    pdf.set_creation_date(FIXED_DATE)

    for page_blocks in PAGES:
        pdf.add_page()
        start = pdf.page_no()
        for kind, payload in page_blocks:
            for text in _texts(kind, payload):
                text.encode("latin-1")  # core fonts only support latin-1
            render(pdf, kind, payload)
        if pdf.page_no() != start:
            raise RuntimeError(f"content planned for page {start} overflowed onto a new page")

    pdf.output(str(output))
    return output


def _texts(kind: str, payload: object) -> list[str]:
    if kind == "table":
        return [c for row in payload["rows"] for c in row]  # type: ignore[index]
    return [str(payload)]


if __name__ == "__main__":
    path = build()
    print(f"wrote {path}")
