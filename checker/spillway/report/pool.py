"""The reader's worker processes: forked with ``os.fork``, fed and answered
through pipes, killed by the parent when it is done or interrupted.

Why not ``multiprocessing.Pool`` (or ``concurrent.futures``): both move tasks
and results through queues guarded by locks that the workers share with the
parent's own threads.  A worker killed while it writes a result keeps the
result queue's lock, and the pool's threads then wait for it for ever; not
waiting for them meant reaching into ``multiprocessing.pool``'s private
attributes.  Here nothing is shared that a dead process can leave taken:

- the workers take task numbers (8 bytes each) from one pipe that only the
  parent writes: a write of up to PIPE_BUF bytes is atomic, and on Linux a
  read of exactly 8 bytes from a pipe holding only 8-byte messages takes one
  whole message;
- each worker writes its answers (length-prefixed pickles) to its own pipe,
  which only the parent reads, in pieces, from whichever pipes have data;
- the tasks' arguments and the function are inherited through the fork, not
  sent;
- leaving the pool kills the workers (SIGKILL) and reaps them (their CPU time
  counts in the parent's ``wait4``); nothing waits on a pipe.  A worker whose
  parent died reads the end of the task pipe and leaves.

Ctrl-C.  A terminal sends SIGINT to the whole process group: the parent and
every worker.  Workers ignore it, so only the parent answers (one line,
``spillway: interrupted``), and leaving the pool kills them.  The signal may
land at any moment, including between ``fork`` and the line that makes a
worker ignore it: the parent therefore blocks SIGINT while it forks.  A child
starts with SIGINT blocked (the mask is inherited, pending signals are not),
ignores it, then unblocks it; the parent unblocks it once the pool is in the
caller's ``ExitStack``, and a SIGINT that arrived meanwhile is delivered to it
then, as a KeyboardInterrupt after which leaving the stack kills the workers.

A worker that dies (the out-of-memory killer) ends the run with
``WorkerLost``, one line, rather than leaving the parent waiting for its
answer.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import selectors
import signal
import struct
from collections.abc import Callable, Iterator, Sequence

from spillway.errors import SpillwayError

_TASK = struct.Struct("<q")        # a task's number, as the workers read it
_LENGTH = struct.Struct("<Q")      # before each answer: its pickle's length
# A worker's pipe holds this much of an answer the parent has not read yet
# (Linux's default is 64 KiB): a worker does not stop at its answer while the
# parent folds the previous ones.  1 MiB is what an unprivileged process may ask.
_PIPE_BYTES = 1 << 20
_PIPE_BUF = 512            # POSIX's least PIPE_BUF: writes up to this size are atomic


class WorkerLost(SpillwayError):
    """A worker process ended before it answered (killed from outside)."""


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class _Inbox:
    """An answer read in pieces: its length's bytes, then its pickle."""

    __slots__ = ("head", "body", "filled")

    def __init__(self):
        self.head = b""
        self.body: bytearray | None = None
        self.filled = 0


class WorkerPool:
    """``workers`` forked processes that call ``function(*arguments[i])`` for
    the task numbers ``i`` the parent hands out.  Use ``start_pool``."""

    def __init__(self, workers: int, function: Callable, arguments: Sequence[tuple]):
        self.function, self.arguments = function, arguments
        self.pids: dict[int, int] = {}      # a worker's answer pipe -> its process
        self.selector = selectors.DefaultSelector()
        self.inboxes: dict[int, _Inbox] = {}       # a worker's answer pipe -> its answer being read
        self.answers: dict[int, tuple[bool, object]] = {}   # task number -> (returned, value or exception)
        self.handed_out = 0
        tasks_out, self.tasks = os.pipe()
        try:
            for _ in range(workers):
                self._fork(tasks_out)
        except BaseException:
            self.close()
            raise
        finally:
            os.close(tasks_out)

    def _fork(self, tasks_out: int) -> None:
        answers_in, answers_out = os.pipe()
        try:
            fcntl.fcntl(answers_out, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)    # type: ignore[attr-defined]
        except (OSError, AttributeError):      # not Linux, or above the system's limit: the default size
            pass
        try:
            pid = os.fork()
        except OSError as exc:
            os.close(answers_in)
            os.close(answers_out)
            raise SpillwayError(f"cannot start a worker process: {exc.strerror}") from None
        if pid == 0:
            status = 1
            try:
                os.close(self.tasks)            # (the write end: the parent's alone, so its close ends the tasks)
                os.close(answers_in)
                for inherited in self.inboxes:  # the earlier workers' answer pipes
                    os.close(inherited)
                _serve(self.function, self.arguments, tasks_out, answers_out)
                status = 0
            finally:
                os._exit(status)                # never back into the parent's code (nor its atexit hooks)
        os.close(answers_out)
        self.pids[answers_in] = pid
        self.inboxes[answers_in] = _Inbox()
        self.selector.register(answers_in, selectors.EVENT_READ)

    def hand_out(self, count: int) -> None:
        """The next ``count`` task numbers, for whichever workers are free first."""
        end = min(self.handed_out + count, len(self.arguments))
        # (writes of at most PIPE_BUF bytes, each atomic; the callers' windows are far below the
        # pipe's 64 KiB, so this never blocks)
        for start in range(self.handed_out, end, _PIPE_BUF // _TASK.size):
            numbers = range(start, min(start + _PIPE_BUF // _TASK.size, end))
            os.write(self.tasks, b"".join(_TASK.pack(n) for n in numbers))
        self.handed_out = max(self.handed_out, end)

    def answer(self, number: int):
        """Task ``number``'s value (its exception raised here), reading every
        worker's answers meanwhile."""
        while number not in self.answers:
            for key, _ in self.selector.select():
                self._read(key.fd)
        returned, value = self.answers.pop(number)
        if not returned:
            raise value            # type: ignore[misc]
        return value

    def _read(self, fd: int) -> None:
        """What the worker's pipe holds of its next answer: its length, or
        some of its pickle, read into a buffer of that length (no copies)."""
        inbox = self.inboxes[fd]
        if inbox.body is None:
            chunk = os.read(fd, _LENGTH.size - len(inbox.head))
            if chunk:
                inbox.head += chunk
                if len(inbox.head) == _LENGTH.size:
                    inbox.body = bytearray(_LENGTH.unpack(inbox.head)[0])
            count = len(chunk)
        else:
            with memoryview(inbox.body) as view:
                count = os.readv(fd, [view[inbox.filled:]])
            inbox.filled += count
            if inbox.filled == len(inbox.body):
                number, returned, value = pickle.loads(inbox.body)
                self.answers[number] = (returned, value)
                self.inboxes[fd] = _Inbox()
        if count == 0:
            raise WorkerLost(f"a worker process ended before it answered ({self._how_ended(fd)}); "
                             f"out of memory?")

    def _how_ended(self, fd: int) -> str:
        """How the worker answering on ``fd`` ended (the end of its pipe: it is
        exiting, so it is reaped at once)."""
        try:
            _, status = os.waitpid(self.pids.pop(fd), 0)
        except ChildProcessError:
            return "reaped already"
        if os.WIFSIGNALED(status):
            return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
        return f"exit status {os.WEXITSTATUS(status)}"

    def close(self) -> None:
        """Kill and reap the workers (idle, after the last answer; mid-task
        when the caller stopped early, failed or was interrupted)."""
        with _interrupts_held():         # a second Ctrl-C must not leave them unreaped
            for pid in self.pids.values():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for pid in self.pids.values():
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass
            self.pids = {}
            for fd in self.inboxes:
                os.close(fd)
            self.inboxes = {}
            self.selector.close()
            if self.tasks >= 0:
                os.close(self.tasks)
                self.tasks = -1


def _serve(function: Callable, arguments: Sequence[tuple], tasks: int, answers: int) -> None:
    """A worker's life: ignore SIGINT (blocked since the fork), then answer
    each task number read until the parent closes the task pipe (or dies)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    while True:
        message = os.read(tasks, _TASK.size)
        if len(message) != _TASK.size:
            return
        (number,) = _TASK.unpack(message)
        try:
            payload = pickle.dumps((number, True, function(*arguments[number])), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:        # raised again in the parent, as Pool.apply_async's get() did
            try:
                payload = pickle.dumps((number, False, exc), pickle.HIGHEST_PROTOCOL)
            except Exception:
                payload = pickle.dumps((number, False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        view = memoryview(_LENGTH.pack(len(payload)) + payload)
        while view:
            view = view[os.write(answers, view):]


def start_pool(stack: contextlib.ExitStack, workers: int, function: Callable,
               arguments: Sequence[tuple]) -> WorkerPool:
    """A pool of ``workers`` forked processes that ignore SIGINT, for
    ``function(*arguments[i])``, entered in ``stack`` (leaving the stack kills
    them) before any interrupt is let through."""
    with _interrupts_held():
        pool = WorkerPool(workers, function, arguments)
        stack.callback(pool.close)
        return pool


def ordered_results(pool: WorkerPool, window: int) -> Iterator:
    """Every task's value in task order, with at most ``window`` tasks handed
    out and not yet taken by the caller (answers that come early wait in the
    parent: the bound keeps them few when the caller is the slower side)."""
    pool.hand_out(window)
    for number in range(len(pool.arguments)):
        value = pool.answer(number)
        pool.hand_out(1)
        yield value
