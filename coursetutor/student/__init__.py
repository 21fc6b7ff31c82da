"""What the tutor knows about a student: the course's topics, profiles, privacy."""

from __future__ import annotations

from .topics import chunk_topics, course_topics, material_topics

__all__ = ["chunk_topics", "course_topics", "material_topics"]
