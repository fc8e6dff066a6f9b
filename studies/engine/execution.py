"""Execution backends: run tasks in process, in local worker processes or on a Dask cluster.

Each backend yields every finished task's results as it arrives, in completion order; the
coordinator (`studies.engine.runner.run`) stores them. Results do not depend on the backend
(each cell's random stream is its own), which the tests check.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import itertools
import multiprocessing
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from multiprocessing import forkserver
from typing import Any

from studies.engine.tasks import Finished, Task, run_task

__all__ = ["CONNECT_TIMEOUT", "WORKER_THREADS", "connect_dask", "execute", "process_pool"]

CONNECT_TIMEOUT = "3s"
# Local workers already use every core: a BLAS or OpenMP pool of its own in each worker would
# oversubscribe them (on 2 cores, 2 workers ran 4x slower per cell with OpenBLAS's 2 threads).
WORKER_THREADS: dict[str, str] = {
    "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


# A worker's exit status when its coordinator has died (no one is left to read it).
_ORPHANED = 70


def _wait_for_exit(pid: int) -> None:
    """Return once process ``pid`` has exited (at once if it already has)."""
    try:
        pidfd = os.pidfd_open(pid)  # Linux 5.3+: woken at the exit itself, no polling
    except ProcessLookupError:
        return
    except (AttributeError, OSError):  # another system, or an older kernel
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            except PermissionError:  # it exists, though it is not ours to signal
                pass
            time.sleep(1.0)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)  # a pidfd becomes readable when its process exits
    poller.poll()


def _watch_coordinator(pid: int) -> None:
    _wait_for_exit(pid)
    # os._exit: the main thread may be mid-cell, and a normal exit would wait for it
    os._exit(_ORPHANED)


def _start_worker(coordinator: int) -> None:
    """Initialise a pool worker: ignore Ctrl-C and exit when the ``coordinator`` process dies.

    Ctrl-C is the coordinator's to handle; workers must not die mid-cell with a traceback.
    A worker's parent is the forkserver, and it waits on a queue that it holds both ends of, so
    nothing else would notice a coordinator killed with SIGKILL: the workers would run on for
    ever and, holding the forkserver's and the resource tracker's pipes, keep those alive too.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_coordinator, args=(coordinator,), daemon=True,
                     name="watch-coordinator").start()


@contextlib.contextmanager
def _single_threaded_libraries() -> Iterator[None]:
    """Set `WORKER_THREADS` (unless the user set them) while processes start, then restore."""
    saved = {name: os.environ.get(name) for name in WORKER_THREADS}
    for name, value in WORKER_THREADS.items():
        os.environ.setdefault(name, value)
    try:
        yield
    finally:
        for name, before in saved.items():
            if before is None:
                os.environ.pop(name, None)


def _check_picklable(tasks: Sequence[Task]) -> None:
    """ValueError naming the study whose tasks cannot be sent to a worker process.

    A pool whose task fails to pickle may wait for it for ever; a study holding a lambda or a
    local function (not importable by name) is the usual cause.
    """
    for task in {task.study.name: task for task in tasks}.values():
        try:
            pickle.dumps(task)
        except Exception as error:  # pickling fails with many exception types
            raise ValueError(
                f"study {task.study.name!r} cannot be sent to worker processes "
                f"({type(error).__name__}: {error}); define its functions at module level, "
                "or run it with --workers 1.") from None


def process_pool(workers: int) -> cf.ProcessPoolExecutor:
    """A pool of ``workers`` local processes that ignore Ctrl-C and exit with this process.

    Its processes come from a forkserver, not a fork of this process: the coordinator may
    hold threads (a Dask client, a test runner's) and forking a threaded process can
    deadlock. Preloading makes each process start warm, with single-threaded BLAS
    (`WORKER_THREADS`).
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["studies.engine", "scipy.stats"])
    with _single_threaded_libraries():
        # the server (and so the workers it forks) reads them when it loads numpy's BLAS; a
        # forkserver already running keeps the settings it started with
        forkserver.ensure_running()
    return cf.ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                                  initargs=(os.getpid(),))


def _local(tasks: Sequence[Task], workers: int) -> Iterator[tuple[Finished, ...]]:
    _check_picklable(tasks)
    pool = process_pool(workers)
    try:
        # no list of the futures is kept: `as_completed` drops each future as it yields it, so
        # a finished task's results are freed once the caller has stored them, not held to
        # the end of the run (a packed full grid is gigabytes)
        for future in cf.as_completed([pool.submit(run_task, task) for task in tasks]):
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def connect_dask(address: str) -> Any:
    """A Dask ``Client`` for ``address``, or ValueError within `CONNECT_TIMEOUT`."""
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(
            "`scheduler` needs Dask; install the dask extra: pip install 'evalcert[dask]'."
        ) from None
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.security import Security

    try:  # checked first: a Client that fails in its constructor complains again at exit
        scheme, location = parse_address(address)
        # the network schemes; inproc (this process only), ucx (needs ucx-py) and unknown ones
        # fail inside the constructor
        if scheme not in ("tcp", "tls", "ws", "wss"):
            raise ValueError(f"scheme {scheme!r} is not one of tcp, tls, ws, wss")
        parse_host_port(location)
        if scheme == "tls" and Security().get_connection_args("client")["ssl_context"] is None:
            raise ValueError("tls needs the certificates of the dask config's "
                             "distributed.comm.tls")
    except (ValueError, TypeError) as error:
        raise ValueError(f"`scheduler` must be an address such as tcp://HOST:PORT; got "
                         f"{address!r} ({error}).") from None
    try:
        return Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as error:
        raise ValueError(
            f"`scheduler` {address!r} is unreachable ({type(error).__name__}: {error})."
        ) from None


def _cluster_threads(client: Any) -> int:
    """The threads of the cluster's workers (at least 1: an adaptive cluster may have none)."""
    threads: int = sum(client.nthreads().values())
    return max(threads, 1)


def _dask(tasks: Sequence[Task], client: Any) -> Iterator[tuple[Finished, ...]]:
    """Results of ``tasks`` on a Dask cluster, at most one task in flight per worker thread.

    Dask's scheduler sends a worker more tasks than it has threads (``worker-saturation``
    1.1 rounds up to 2 for one thread), and a task sent to a worker busy with a long cell
    waits behind it while another worker idles: with every task submitted at once, the quick
    suite ran 1.28x faster on 2 Dask workers than on 1, against 1.96x on 2 local workers.
    Submitting the next task as one finishes costs a round trip per task (milliseconds).
    """
    from distributed import as_completed

    waiting = iter(tasks)
    # loop given: as_completed otherwise looks for a default client, and ours is not one
    finished = as_completed(loop=client.loop)
    in_flight: set[Any] = set()
    threads, counted = _cluster_threads(client), time.monotonic()

    def submit(count: int) -> None:
        for task in itertools.islice(waiting, max(count, 0)):
            future = client.submit(run_task, task, pure=False)
            in_flight.add(future)
            finished.add(future)

    try:
        submit(threads)
        for future in finished:
            in_flight.discard(future)
            if time.monotonic() - counted > 1.0:  # workers may have joined or left
                threads, counted = _cluster_threads(client), time.monotonic()
            submit(threads - len(in_flight))
            yield future.result()
    finally:
        client.cancel(list(in_flight))


def execute(tasks: Sequence[Task], workers: int, client: Any
            ) -> Iterator[tuple[Finished, ...]]:
    """Results of ``tasks`` as they finish: on ``client`` (Dask) if given, else locally.

    One worker (or one task) runs in this process; more run in a process pool.
    """
    if client is not None:
        return _dask(tasks, client)
    if workers <= 1 or len(tasks) <= 1:
        return (run_task(task) for task in tasks)
    return _local(tasks, workers)
