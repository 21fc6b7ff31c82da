"""The tutor: one turn from question to a cited, pedagogical answer."""

from .turn import TurnState, Tutor

__all__ = ["TurnState", "Tutor"]
