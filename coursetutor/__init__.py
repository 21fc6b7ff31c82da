"""coursetutor: a self-hostable AI tutor that answers only from a course's own material."""

from .config import Settings, load_settings
from .errors import CoursetutorError
from .tutor import Tutor
from .types import (
    Answer,
    Chunk,
    Citation,
    Course,
    Document,
    DoneEvent,
    FileMeta,
    Hit,
    Locator,
    MetaEvent,
    SearchFilters,
    Session,
    SourcesEvent,
    StreamEvent,
    TokenEvent,
    Turn,
)
from .workspace import Workspace

__all__ = [
    "Answer",
    "Chunk",
    "Citation",
    "Course",
    "CoursetutorError",
    "Document",
    "DoneEvent",
    "FileMeta",
    "Hit",
    "Locator",
    "MetaEvent",
    "SearchFilters",
    "Session",
    "Settings",
    "SourcesEvent",
    "StreamEvent",
    "TokenEvent",
    "Turn",
    "Tutor",
    "Workspace",
    "load_settings",
]
__version__ = "0.3.0"
