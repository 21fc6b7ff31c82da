"""coursetutor: a self-hostable AI tutor that answers only from a course's own material."""

from .config import Settings, load_settings
from .errors import CoursetutorError
from .types import Chunk, Course, Document, FileMeta, Hit, Locator, SearchFilters
from .workspace import Workspace

__all__ = [
    "Chunk",
    "Course",
    "CoursetutorError",
    "Document",
    "FileMeta",
    "Hit",
    "Locator",
    "SearchFilters",
    "Settings",
    "Workspace",
    "load_settings",
]
__version__ = "0.1.0"
