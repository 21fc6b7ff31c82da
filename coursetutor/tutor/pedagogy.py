"""Teach rather than tell: the scaffolding ladder for exercises and the task for each turn."""

from __future__ import annotations

from typing import Literal

Level = Literal["hint", "guiding", "steps", "example", "solution"]
LADDER: tuple[Level, ...] = ("hint", "guiding", "steps", "example", "solution")
# the rungs written from the next step of the exercise's worked solution (stages/plan.py);
# an analogous example uses other numbers and another function, and the solution rung has
# the whole solution in its sources anyway
FROM_STEP: tuple[Level, ...] = ("hint", "guiding", "steps")

LEVEL_HINTS = {
    1: "a beginner: short sentences, no jargon without explaining it",
    2: "an early student: plain words, one idea at a time",
    3: "an average student of the course",
    4: "an advanced student: be concise and precise",
    5: "an expert: be brief and technical",
}


def scaffold_level(earlier_turns: int, allow_solutions: bool, wants_answer: bool) -> Level:
    """The rung for a student's next request on one exercise.

    Each earlier turn on the same exercise climbs one rung: hint, guiding questions, steps,
    an analogous worked example; the full solution only where the course allows it.
    """
    if allow_solutions and wants_answer:
        return "solution"
    rung = min(max(earlier_turns, 0), len(LADDER) - 1)
    level = LADDER[rung]
    if level == "solution" and not allow_solutions:
        return "example"
    return level


# a short leash keeps a small model from running on into the solution
MAX_TOKENS: dict[str, int] = {"hint": 120, "guiding": 160, "steps": 220, "example": 360}


def max_tokens(level: Level | None, default: int) -> int:
    """Reply length for a rung of the ladder (`default` for other answers)."""
    return min(MAX_TOKENS.get(level or "", default), default) if level else default


def task_prompt(intent: str, level: Level | None, about_exercise: bool = False) -> str:
    """Which task prompt file the answer uses: a rung for exercise help, the method explained
    for a why/how question about an exercise."""
    if intent == "exercise" and level is not None:
        return f"task_{level}"
    if about_exercise:
        return "task_why_exercise"
    return {"definition": "task_definition", "comparison": "task_compare",
            "exam": "task_exam"}.get(intent, "task_explain")


def preferred_types(intent: str) -> tuple[str, ...]:
    """Document types that should rank first for an intent."""
    if intent in ("exercise", "exam"):
        return ("exercise", "exam")
    return ("lecture", "textbook", "slides", "summary", "transcript")


def level_hint(level: int) -> str:
    return LEVEL_HINTS.get(max(1, min(5, level)), LEVEL_HINTS[3])
