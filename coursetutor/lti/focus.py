"""What a link opens inside its course: the whole course, one document or one live class (the
`document` or `live_class` parameter deep linking puts on the link)."""

from __future__ import annotations

import dataclasses

from ..errors import InputError, NotFoundError
from ..store import Store
from ..store.classes import LiveClass
from ..types import Course, Document


@dataclasses.dataclass(frozen=True)
class Focus:
    """A document or a live class of the course ('' for neither), with its title."""

    document: str = ""
    live_class: str = ""
    title: str = ""

    def custom(self) -> dict[str, str]:
        """The link's parameters that name it."""
        if self.document:
            return {"document": self.document}
        return {"live_class": self.live_class} if self.live_class else {}


def check(store: Store, tenant: str, course: str, document: str = "",
          live_class: str = "") -> Focus:
    """The focus a link names, checked: its document or live class is one of `course`'s."""
    if document and live_class:
        raise InputError("a link opens a document or a live class, not both")
    if document:
        found = store.find_document(tenant, course, document)
        if found is None:
            raise NotFoundError(f"document {document!r} is not in course {course!r}")
        return Focus(document=document, title=found.title or document)
    if live_class:
        lesson = store.classes.get_class(tenant, course, live_class)
        return Focus(live_class=live_class, title=lesson.title or live_class)
    return Focus()


@dataclasses.dataclass(frozen=True)
class Choices:
    """What a teacher may link to in one course."""

    course: Course
    documents: list[Document]
    classes: list[LiveClass]


def choices(store: Store, tenant: str) -> list[Choices]:
    """Every course of the tenant with its documents and live classes, for deep linking."""
    return [Choices(c, store.list_documents(tenant, c.id),
                    store.classes.list_classes(tenant, c.id))
            for c in store.list_courses(tenant)]
