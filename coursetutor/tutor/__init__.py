"""The tutor: one turn from question to a cited, pedagogical answer."""

from .turn import Opened, Tutor

__all__ = ["Opened", "Tutor"]
