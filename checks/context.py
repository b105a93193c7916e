"""What a running check may use (:class:`Context`): seeded random streams, a task map over an executor with a memo
and a persistent store, and progress reporting."""
from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, MutableMapping, Sequence
from concurrent.futures import Executor, as_completed
from typing import Any

import numpy as np


def stream_key(*parts: str) -> int:
    """A stable 64-bit integer from strings (independent of PYTHONHASHSEED)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def task_key(fn: Callable[..., Any], task: tuple) -> str:
    """A stable key of a task: the function's qualified name and the pickled arguments (SHA-256)."""
    payload = pickle.dumps((getattr(fn, "__module__", ""), getattr(fn, "__qualname__", repr(fn)), task), protocol=4)
    return hashlib.sha256(payload).hexdigest()


class Context:
    """What a running check may use: seeded random streams, a task map and progress reporting.

    Every random stream derives from ``(seed, check id, stream name)``, so results do not depend
    on which other checks run, in what order, or on which executor.
    """

    def __init__(self, check_id: str, seed: int, profile: str, *, executor: Executor | None = None,
                 progress: Callable[[str, float], None] | None = None,
                 memo: MutableMapping[str, Any] | None = None, store: Any = None) -> None:
        self.check_id = check_id
        self.seed = seed
        self.profile = profile
        self._executor = executor
        self._progress = progress
        self._memo = memo
        self._store = store          # a attnverify.checks.store.CheckStore (persistent task results) or None

    def seed_sequence(self, name: str = "") -> np.random.SeedSequence:
        return np.random.SeedSequence([self.seed, stream_key(self.check_id, name)])

    def rng(self, name: str = "") -> np.random.Generator:
        """An independent generator for the named stream of this check."""
        return np.random.default_rng(self.seed_sequence(name))

    def seeds(self, n: int, name: str = "tasks") -> list[np.random.SeedSequence]:
        """``n`` independent, picklable seed sequences for parallel tasks."""
        return self.seed_sequence(name).spawn(n)

    def map(self, fn: Callable[..., Any], tasks: Sequence[tuple]) -> list[Any]:
        """``[fn(*task) for task in tasks]``, in order, on the executor when one is set.

        With a ``memo`` (a mapping given by the caller, e.g. the power self-test, which reruns a check many times
        with only its analytic side changed), a task whose function and arguments were seen before is not run
        again. Tasks are the numeric side: they never read the theory, so their result depends only on them.
        With a ``store`` (``attnverify.checks.store``), every task result is written to disk as soon as it finishes and tasks
        stored by an earlier run are read back instead of run, so a killed run resumes where it stopped."""
        tasks = list(tasks)
        if self._memo is not None:
            keys = [task_key(fn, task) for task in tasks]
            todo = [(k, t) for k, t in dict(zip(keys, tasks)).items() if k not in self._memo]
            memo, self._memo = self._memo, None
            try:
                for k, value in zip([k for k, _ in todo], self.map(fn, [t for _, t in todo])):
                    memo[k] = value
            finally:
                self._memo = memo
            return [memo[k] for k in keys]
        out: list[Any] = [None] * len(tasks)
        todo = list(range(len(tasks)))
        keys: list[str] = []
        if self._store is not None:                 # finished tasks of an earlier (killed) run are read back
            keys = [self._store.key(fn, task) for task in tasks]
            todo = []
            for i, k in enumerate(keys):
                hit, value = self._store.get(k)
                if hit:
                    out[i] = value
                else:
                    todo.append(i)

        def finished(i: int, value: Any, done: int) -> None:
            out[i] = value
            if self._store is not None:
                self._store.put(keys[i], value)     # stored as soon as it finishes
            self.progress((len(tasks) - len(todo) + done) / len(tasks))

        if self._executor is None or len(todo) < 2:
            for n, i in enumerate(todo):
                finished(i, fn(*tasks[i]), n + 1)
            return out
        futures = {self._executor.submit(fn, *tasks[i]): i for i in todo}
        try:
            for n, fut in enumerate(as_completed(futures)):
                finished(futures[fut], fut.result(), n + 1)
        finally:
            for fut in futures:
                fut.cancel()
        return out

    def progress(self, fraction: float) -> None:
        if self._progress is not None:
            self._progress(self.check_id, float(fraction))
