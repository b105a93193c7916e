"""Executors for sweeps: serial, a local process pool, or a Dask distributed cluster.

Every multi-run check sends its independent tasks through ``Context.map``, which submits them to
the executor made here. Tasks carry their own seed sequences, so the results do not depend on the
executor, the number of workers or the order in which tasks finish.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager

from attnverify.checks.framework import InputError

KINDS = ("serial", "local", "dask")


@contextmanager
def make_executor(kind: str = "local", *, jobs: int | None = None,
                  scheduler: str | None = None) -> Iterator[Executor | None]:
    """Yield an executor of ``kind`` and shut it down afterwards.

    ``serial``: None (tasks run in-process). ``local``: a process pool with ``jobs`` workers (all
    cores by default). ``dask``: a ``distributed.Client`` executor on the scheduler at ``scheduler``,
    or on a new ``LocalCluster`` on loopback when no address is given (extra ``attnverify[distributed]``).
    """
    if kind not in KINDS:
        raise InputError(f"unknown executor {kind!r} (choose from {', '.join(KINDS)})")
    if scheduler is not None and kind != "dask":
        raise InputError("--scheduler needs --executor dask")
    if kind == "serial" or (kind == "local" and jobs == 1):
        yield None
        return
    if kind == "local":
        with ProcessPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
            yield pool
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError("--executor dask needs the distributed extra: pip install 'attnverify[distributed]'") from None
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=jobs or os.cpu_count() or 1, threads_per_worker=1, host="127.0.0.1",
                               dashboard_address=None, processes=True)
    try:
        try:
            client = Client(cluster if cluster is not None else scheduler, timeout=10)
        except OSError as exc:
            raise InputError(f"--scheduler: cannot reach a Dask scheduler at {scheduler!r} ({exc})") from None
        try:
            yield client.get_executor(pure=False)
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()
