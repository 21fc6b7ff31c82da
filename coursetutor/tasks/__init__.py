"""Ingest jobs on RQ workers (`coursetutor worker`), for deployments with Redis.

Why RQ: the ingest pipeline is synchronous code (pypdf, the embedding engine, the store) and
RQ runs plain functions, with no asyncio to bridge (arq) and no broker besides the Redis we
already have (Celery). A `SimpleWorker` runs each task in its own process without forking, so
the embedding model it loaded at start stays loaded from one task to the next.

An upload becomes one task per file, so the files of a large upload are parsed and embedded by
several workers at once; each task then writes its document into the course under that course's
lock (lock.py), so two workers never write one course at the same time. Progress is counted in
Redis (progress.py) and mirrored into the store's job record, which any API process reads; the
task that finishes last writes the job's final status and report.
"""
