"""The reader's worker processes, started so that Ctrl-C gives one line.

A terminal sends SIGINT to the whole process group: the parent and every
forked worker.  A worker that inherits the parent's handler raises
KeyboardInterrupt inside multiprocessing's worker loop, and multiprocessing
prints ``Process ForkPoolWorker-N:`` and a traceback for it, before the
parent's ``spillway: interrupted``.  So workers ignore SIGINT: only the
parent answers it, and leaving the pool terminates the workers (SIGTERM,
which they take quietly).

The signal may land at any moment, including between ``fork`` and the line
that makes the worker ignore it.  The parent therefore blocks SIGINT while it
forks: a child starts with SIGINT blocked (the mask is inherited, pending
signals are not), ignores it, then unblocks it; the parent unblocks it once
the pool is running, and a SIGINT that arrived meanwhile is delivered to it
then, as a KeyboardInterrupt after the pool is in its ``with`` block.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import signal
from collections.abc import Iterator
from multiprocessing.pool import TERMINATE, Pool  # type: ignore[attr-defined]


def _ignore_interrupts() -> None:
    """Each worker's first step (the pool's initializer)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class _Workers:
    """The pool as a context manager: on a normal exit its workers are idle and
    ``terminate`` ends them; on an exception (Ctrl-C, an input error from one
    task while others run) they are killed without waiting on the pool's
    queues.  ``Pool.terminate`` there can hang for ever: a worker killed while
    it writes a result keeps the result queue's lock, and the pool's task
    thread then waits for that lock while ``terminate`` waits for the thread
    (seen in one Ctrl-C in five on two ROCm libraries)."""

    def __init__(self, workers: int):
        with _interrupts_held():
            self.pool = mp.get_context("fork").Pool(workers, initializer=_ignore_interrupts)

    def __enter__(self) -> Pool:
        return self.pool

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.pool.terminate()
        else:
            _abandon(self.pool)


def _abandon(pool: Pool) -> None:
    """Kill ``pool``'s workers and leave its threads (daemons, blocked at worst
    on a dead worker's lock) to the interpreter's exit.  This reaches into
    multiprocessing.pool's attributes (the same in Python 3.8 to 3.13): the
    worker thread must stop replacing workers before they are killed, and the
    pool's exit hook, which would join the blocked threads, is cancelled."""
    handler = pool._worker_handler                         # type: ignore[attr-defined]
    handler._state = TERMINATE
    pool._change_notifier.put(None)                        # type: ignore[attr-defined]
    handler.join()
    for process in pool._pool:                             # type: ignore[attr-defined]
        process.kill()
    for process in pool._pool:                             # type: ignore[attr-defined]
        process.join()
    pool._state = TERMINATE                                # type: ignore[attr-defined]
    pool._terminate.cancel()                               # type: ignore[attr-defined]


def start_pool(stack: contextlib.ExitStack, workers: int) -> Pool:
    """A forked pool of ``workers`` that ignore SIGINT, entered in ``stack``
    (leaving the stack ends it) before any interrupt is let through."""
    with _interrupts_held():
        return stack.enter_context(_Workers(workers))
