"""A job's progress, counted in Redis by the tasks of its files.

Two hashes per job: counts (total, done, embedded, to_embed) and the result of each file by its
index. Recording a result and counting it is one atomic step that counts a file once, so the
task that brings `done` to `total` knows it is the last and writes the job's outcome.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from ..ingest import FileResult
from ..store.redis import RedisLink

JOB_TTL = 7 * 24 * 3600  # a job's counts outlive any plausible queue wait

# KEYS: counts, results; ARGV: index, result. Returns {done, total}, {-1, -1} if recorded before.
_RECORD = """
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then
  return {-1, -1}
end
local done = redis.call('HINCRBY', KEYS[1], 'done', 1)
return {done, tonumber(redis.call('HGET', KEYS[1], 'total') or '0')}
"""


@dataclasses.dataclass(frozen=True)
class Counts:
    done: int
    embedded: int
    to_embed: int


def _result_json(result: FileResult) -> str:
    return json.dumps(dataclasses.asdict(result), ensure_ascii=False)


class JobProgress:
    """The counts and file results of one job."""

    def __init__(self, link: RedisLink, job_id: str) -> None:
        self.link = link
        self.counts_key = link.key("job", job_id)
        self.results_key = link.key("job", job_id, "files")

    def open(self, total: int, early: dict[int, FileResult]) -> None:
        """Start counting `total` files, `early` ones (refused before any task) done."""
        with self.link.reached(), self.link.client.pipeline() as pipe:
            pipe.hset(self.counts_key, mapping={"total": total, "done": len(early),
                                                "embedded": 0, "to_embed": 0})
            for index, result in early.items():
                pipe.hset(self.results_key, str(index), _result_json(result))
            pipe.expire(self.counts_key, JOB_TTL)
            pipe.expire(self.results_key, JOB_TTL)
            pipe.execute()

    def add(self, embedded: int = 0, to_embed: int = 0) -> Counts:
        """Count texts embedded and to embed; returns the job's counts."""
        with self.link.reached(), self.link.client.pipeline() as pipe:
            pipe.hincrby(self.counts_key, "embedded", embedded)
            pipe.hincrby(self.counts_key, "to_embed", to_embed)
            pipe.hget(self.counts_key, "done")
            found: list[Any] = pipe.execute()
        return Counts(int(found[2] or 0), int(found[0]), int(found[1]))

    def record(self, index: int, result: FileResult) -> tuple[int, int]:
        """Keep a file's result and count it done; returns (done, total), or (-1, -1) when
        the file was recorded before (its task and its failure callback both report it)."""
        with self.link.reached():
            found = self.link.client.eval(_RECORD, 2, self.counts_key, self.results_key,
                                          str(index), _result_json(result))
        return int(found[0]), int(found[1])

    def results(self) -> list[FileResult]:
        """Every file's result, in upload order."""
        with self.link.reached():
            raw: dict[Any, Any] = self.link.client.hgetall(self.results_key)
        ordered = sorted(raw.items(), key=lambda item: int(item[0]))
        return [FileResult(**json.loads(value)) for _, value in ordered]
