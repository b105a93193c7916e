"""Executors for sweeps: serial, a local process pool, or a Dask distributed cluster.

Every multi-run check sends its independent tasks through ``Context.map``, which submits them to
the executor made here. Tasks carry their own seed sequences, so the results do not depend on the
executor, the number of workers or the order in which tasks finish.
"""
from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

from attnverify.checks.params import InputError

KINDS = ("serial", "local", "dask")


def ignore_interrupts(memo: bool = False) -> None:
    """Worker initializer: Ctrl-C reaches the whole process group, but only the parent acts on it (it stops the
    workers itself), so a worker never prints a KeyboardInterrupt traceback. ``memo``: the parent keeps the closed
    forms in the derivation cache (:mod:`attnverify.theory_memo`); so does the worker, however it was started."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if memo:
        from attnverify import theory_memo

        theory_memo.install()


@contextmanager
def _interrupts_ignored() -> Iterator[None]:
    """SIGINT ignored inside the block (main thread only), so that processes started there ignore it too."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel the queued tasks and end the workers now, without waiting for the running ones (after an interrupt
    or an error: their results are no longer wanted; finished ones are already in the task store). The pool's
    manager thread is joined too: left running, it closes its wake-up pipe while the interpreter's exit handler
    writes to it, and the command's one line after Ctrl-C gained an 'Exception ignored ... Bad file descriptor'."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in workers:
        if proc.is_alive():
            proc.terminate()
    for proc in workers:
        proc.join(timeout=5)
    if manager is not None:
        manager.join(timeout=5)


def _reachable(scheduler: str) -> None:
    """A TCP scheduler address that refuses a connection (or gives none within 3 s) is an input error at once: the
    Dask client would retry it for its whole timeout before saying so."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(scheduler)
        host, port = parse_host_port(location)
    except (ValueError, TypeError):
        return                                           # not host:port: the client reports it
    if scheme not in ("tcp", "tls"):
        return
    try:
        socket.create_connection((host, port), timeout=3).close()
    except OSError as exc:
        raise InputError(f"--scheduler: cannot reach a Dask scheduler at {scheduler!r} ({exc})") from None


@contextmanager
def make_executor(kind: str = "local", *, jobs: int | None = None, scheduler: str | None = None,
                  mp_context: Any = None) -> Iterator[Executor | None]:
    """Yield an executor of ``kind`` and shut it down afterwards.

    ``serial``: None (tasks run in-process). ``local``: a process pool with ``jobs`` workers (all
    cores by default; ``mp_context``: the multiprocessing start method's context, the platform's by default); its
    workers ignore SIGINT, and an exception (Ctrl-C included) leaving the block ends them at once. ``dask``: a ``distributed.Client`` executor on the scheduler at ``scheduler``,
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
        from attnverify.theory import closed_forms

        pool = ProcessPoolExecutor(max_workers=jobs or os.cpu_count() or 1, mp_context=mp_context,
                                   initializer=ignore_interrupts, initargs=(closed_forms.persisting(),))
        try:
            yield pool
        except BaseException:
            _stop_pool(pool)
            raise
        pool.shutdown(wait=True)
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError("--executor dask needs the distributed extra: pip install 'attnverify[distributed]'") from None
    cluster = None
    if scheduler is None:
        import logging

        # the workers start with SIGINT ignored (inherited): Ctrl-C is the parent's; Dask's warnings about the tasks
        # it cancels then (and the workers it stops) are not the user's business: only its errors are printed
        with _interrupts_ignored():
            cluster = LocalCluster(n_workers=jobs or os.cpu_count() or 1, threads_per_worker=1, host="127.0.0.1",
                                   dashboard_address=None, processes=True, silence_logs=logging.ERROR)
    else:
        _reachable(scheduler)
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
