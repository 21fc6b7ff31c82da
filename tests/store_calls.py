"""A store that counts the calls made on it from outside the store: the test of one read of
the course and the learner per turn wraps the real store in it."""

from __future__ import annotations

import collections
import inspect
import threading
from typing import Any

from coursetutor.store import Store

# what a store holds as attributes with methods of their own (store.profiles.get(...))
PARTS = ("classes", "summaries", "profiles", "mastery", "reuse")


class Counter:
    """Calls by name, with the caller's module, safe across the worker threads of the API."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls: collections.Counter[str] = collections.Counter()
        self.callers: collections.Counter[str] = collections.Counter()

    def add(self, name: str) -> None:
        caller = inspect.stack()[2].frame.f_globals.get("__name__", "?")
        with self._lock:
            self.calls[name] += 1
            self.callers[caller] += 1

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self.callers.clear()

    @property
    def total(self) -> int:
        return sum(self.calls.values())


class _Counted:
    """One object's methods, each call booked under `prefix.name`."""

    def __init__(self, target: Any, counter: Counter, prefix: str = "") -> None:
        self._target = target
        self._counter = counter
        self._prefix = prefix

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name in PARTS and not self._prefix:
            return _Counted(value, self._counter, f"{name}.")
        if not callable(value) or name.startswith("_"):
            return value
        counter, label = self._counter, self._prefix + name

        def counted(*args: Any, **kwargs: Any) -> Any:
            counter.add(label)
            return value(*args, **kwargs)

        return counted


def counting(store: Store) -> tuple[Store, Counter]:
    """`store` behind a proxy that counts each call made on it, and the counter."""
    counter = Counter()
    proxy: Any = _Counted(store, counter)
    return proxy, counter
