"""The tutor: one turn from question to a cited, pedagogical answer."""

from .turn import Tutor

__all__ = ["Tutor"]
