"""Loading course files into the store."""

from .manifest import Manifest, load_manifest
from .pipeline import FileResult, Ingestor, IngestReport, Progress

__all__ = ["FileResult", "IngestReport", "Ingestor", "Manifest", "Progress", "load_manifest"]
