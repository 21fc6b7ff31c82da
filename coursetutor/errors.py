"""The coursetutor exception tree.

CoursetutorError
 ├── ConfigError            bad or contradictory settings
 ├── InputError             a request the caller can fix
 │    ├── EmptyQueryError
 │    ├── ManifestError
 │    ├── PayloadTooLargeError
 │    └── UnsupportedFileError
 ├── DocumentError          a file that cannot be read
 │    ├── CorruptFileError
 │    ├── EncryptedFileError
 │    └── EmptyDocumentError
 │         └── NoTextLayerError  every page is a scan (page counts attached)
 ├── NotFoundError          a course, document or chunk that does not exist (for this caller)
 ├── ConflictError          an id that is already taken
 │    └── RegisteredError    an LMS's issuer and client id belong to a registration already
 ├── JobCancelledError      the ingest job of a file was cancelled while it ran
 ├── AccessError            who is asking may not do this
 │    ├── AuthenticationError   no key, or a bad one
 │    │    └── LaunchError        an LTI login or launch that fails a check (`reason` attached)
 │    ├── PermissionDeniedError a known resource this role may not change
 │    └── RateLimitError        too many requests (retry_after attached)
 │         └── ComputeBudgetError  a key's or tenant's compute seconds are spent
 ├── StoreError             the store failed or holds data from a newer version
 ├── RedisUnavailableError  the shared Redis (limits, sessions, ingest queue) cannot be reached
 ├── PlatformError          an LMS's key set, token, roster or grade book endpoint failed
 │    └── RegistrationError  LTI Dynamic Registration: the LMS's configuration or answer
 └── BackendError           an embedding or generation backend is missing or down
      ├── MissingDependencyError
      ├── BackendUnavailableError   the server cannot be reached or keeps failing
      ├── BackendTimeoutError       no reply (or no next token) within the timeout
      ├── ModelNotFoundError        the backend has no such model (or a bad model file)
      ├── IncompleteAnswerError     the reply stopped in the middle (partial text attached)
      └── ModelBusyError            every context of an in-process model is taken, and the
                                    call asked not to wait (never reaches a caller's user)

Every error has a `code`: the one its raise site names (`course_not_found`, with the values
its message names as `params`: `course="calculus-1"`), else its class's (`not_found`). Pages
translate a message by its code and fill it from the params; the English message stays for
logs and for clients that show it as it is.
"""

from __future__ import annotations

import re

Param = str | int | float


def class_code(cls: type[BaseException]) -> str:
    """The snake_case code of an error class: `NotFoundError` -> `not_found`; `internal` for
    a class outside the tree."""
    if not issubclass(cls, CoursetutorError):
        return "internal"
    name = cls.__name__.removesuffix("Error") or "error"
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class CoursetutorError(Exception):
    """Base class of every error coursetutor raises on purpose; `code` and `params` say what
    happened in words a page can translate (see the module's docstring)."""

    def __init__(self, message: str = "", *, code: str = "", **params: Param) -> None:
        super().__init__(message)
        self.code = code or class_code(type(self))
        self.params: dict[str, Param] = params


class ConfigError(CoursetutorError):
    """Settings are invalid."""


class InputError(CoursetutorError):
    """The caller sent something that cannot be processed as it is."""


class EmptyQueryError(InputError):
    """A question with no searchable text."""


class ManifestError(InputError):
    """A course manifest that cannot be read or is inconsistent."""


class UnsupportedFileError(InputError):
    """A file type no loader handles."""


class DocumentError(CoursetutorError):
    """A file that cannot be turned into text."""


class CorruptFileError(DocumentError):
    """The file is damaged or not what its extension says."""


class EncryptedFileError(DocumentError):
    """The file is password protected."""


class EmptyDocumentError(DocumentError):
    """The file holds no extractable text."""


class NoTextLayerError(EmptyDocumentError):
    """No page of a PDF has a text layer; `pages` and `no_text_pages` say how many."""

    def __init__(self, message: str, pages: int, no_text_pages: list[int], *, code: str = "",
                 **params: Param) -> None:
        super().__init__(message, code=code, **params)
        self.pages = pages
        self.no_text_pages = no_text_pages


class NotFoundError(CoursetutorError):
    """A resource that does not exist in the caller's scope."""


class ConflictError(CoursetutorError):
    """The resource to create already exists."""


class RegisteredError(ConflictError):
    """An LMS's issuer and client id are registered already (`reason`: `already_registered`
    in the same tenant, `registered_by_another_tenant` elsewhere)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class JobCancelledError(CoursetutorError):
    """The ingest job of the file being ingested was cancelled."""


class AccessError(CoursetutorError):
    """The caller may not do this."""


class AuthenticationError(AccessError):
    """No API key, or one that is unknown, revoked or malformed."""


class LaunchError(AuthenticationError):
    """An LTI login or launch that cannot be trusted; `reason` names the check it failed
    (`unknown_issuer`, `bad_signature`, `expired`, `replayed_nonce`, ...)."""

    def __init__(self, message: str, reason: str, *, code: str = "", **params: Param) -> None:
        super().__init__(message, code=code, **params)
        self.reason = reason


class PermissionDeniedError(AccessError):
    """The caller's role may not do this to a resource it can see."""


class RateLimitError(AccessError):
    """Too many requests; `retry_after` says in how many seconds to try again."""

    def __init__(self, message: str, retry_after: int, *, code: str = "",
                 **params: Param) -> None:
        super().__init__(message, code=code, **params)
        self.retry_after = retry_after


class ComputeBudgetError(RateLimitError):
    """A key's or tenant's budget of compute seconds cannot cover a request now; `bucket`
    says whose (key or tenant)."""

    def __init__(self, message: str, retry_after: int, bucket: str, *, code: str = "",
                 **params: Param) -> None:
        super().__init__(message, retry_after, code=code, **params)
        self.bucket = bucket


class PayloadTooLargeError(InputError):
    """An upload over the size limit."""


class StoreError(CoursetutorError):
    """The store failed."""


class RedisUnavailableError(CoursetutorError):
    """The Redis that several processes share cannot be reached or failed."""


class PlatformError(CoursetutorError):
    """An LMS platform's endpoint (its key set, token, roster or scores) failed or refused."""


class RegistrationError(PlatformError):
    """LTI Dynamic Registration could not complete on the platform's side; `reason` names the
    step (`configuration_unreachable`, `bad_configuration`, `issuer_mismatch`,
    `registration_refused`, `bad_registration_reply`)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class BackendError(CoursetutorError):
    """A model backend failed."""


class MissingDependencyError(BackendError):
    """An optional dependency is not installed."""


class BackendUnavailableError(BackendError):
    """The backend cannot be reached, or keeps answering with errors after retries."""


class BackendTimeoutError(BackendError):
    """The backend did not answer (or stopped streaming) within the timeout."""


class ModelNotFoundError(BackendError):
    """The configured model does not exist on the backend, or its file is wrong."""


class IncompleteAnswerError(BackendError):
    """Generation broke off mid-stream; `partial` holds what was received."""

    def __init__(self, message: str, partial: str = "", *, code: str = "",
                 **params: Param) -> None:
        super().__init__(message, code=code, **params)
        self.partial = partial


class ModelBusyError(BackendError):
    """Every context of an in-process model is taken (a paused stream holds one), and the
    call asked not to wait for one (`GenParams.wait`)."""
