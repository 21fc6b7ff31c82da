"""The course check: asks the tutor what each section of each document answers and reports
what it finds, extracts, cites and declines (`coursetutor check`, the teacher page's check)."""

from .course import CourseCheck, DocumentCheck, check_course, check_dict

__all__ = ["CourseCheck", "DocumentCheck", "check_course", "check_dict"]
