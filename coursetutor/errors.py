"""The coursetutor exception tree.

CoursetutorError
 ├── ConfigError            bad or contradictory settings
 ├── InputError             a request the caller can fix
 │    ├── EmptyQueryError
 │    ├── ManifestError
 │    └── UnsupportedFileError
 ├── DocumentError          a file that cannot be read
 │    ├── CorruptFileError
 │    ├── EncryptedFileError
 │    └── EmptyDocumentError
 ├── NotFoundError          a course, document or chunk that does not exist (for this caller)
 ├── StoreError             the store failed or holds data from a newer version
 └── BackendError           an embedding or generation backend is missing or down
      ├── MissingDependencyError
      ├── BackendUnavailableError   the server cannot be reached or keeps failing
      ├── BackendTimeoutError       no reply (or no next token) within the timeout
      ├── ModelNotFoundError        the backend has no such model (or a bad model file)
      └── IncompleteAnswerError     the reply stopped in the middle (partial text attached)
"""

from __future__ import annotations


class CoursetutorError(Exception):
    """Base class of every error coursetutor raises on purpose."""


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


class NotFoundError(CoursetutorError):
    """A resource that does not exist in the caller's scope."""


class StoreError(CoursetutorError):
    """The store failed."""


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

    def __init__(self, message: str, partial: str = "") -> None:
        super().__init__(message)
        self.partial = partial
