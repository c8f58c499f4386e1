"""report.pool: forked workers fed through pipes.  Answers come in task
order with at most ``window`` tasks handed out ahead; a worker's exception
is raised in the parent; workers ignore SIGINT; a worker killed from outside
ends the run with one error instead of a wait for ever; leaving the pool
kills and reaps every worker, also in the middle of tasks.  (Ctrl-C through
the command line: tests/faults/test_fault_sigint_*.py.)"""

from __future__ import annotations

import contextlib
import os
import signal
import time

import pytest

from spillway.report import pool as pool_module
from spillway.report.pool import WorkerLost, ordered_results, start_pool


def _exists(pid: int) -> bool:
    """Running, or a zombie (a worker killed and not reaped)."""
    return os.path.exists(f"/proc/{pid}")


def _slow_negation(value: int) -> int:
    time.sleep(0.002 * (value % 3))     # answers come back out of order
    return -value


def test_answers_in_task_order_within_the_window():
    arguments = [(i,) for i in range(40)]
    with contextlib.ExitStack() as stack:
        pool = start_pool(stack, 2, _slow_negation, arguments)
        got, ahead = [], []
        for value in ordered_results(pool, 3):
            got.append(value)
            ahead.append(pool.handed_out - len(got))
    assert got == [-i for i in range(40)]
    assert max(ahead) <= 3 and ahead[0] == 3


def _fails_on_seven(value: int) -> int:
    if value == 7:
        raise ValueError(f"task {value} refused")
    return value


def test_a_workers_exception_is_raised_in_the_parent_in_its_turn():
    got = []
    with pytest.raises(ValueError, match="task 7 refused"):
        with contextlib.ExitStack() as stack:
            pool = start_pool(stack, 2, _fails_on_seven, [(i,) for i in range(20)])
            got.extend(ordered_results(pool, 4))
    assert got == list(range(7))


def _own_pid(_: int) -> int:
    time.sleep(0.01)
    return os.getpid()


def test_workers_ignore_sigint_and_are_reaped_on_leaving():
    with contextlib.ExitStack() as stack:
        pool = start_pool(stack, 2, _own_pid, [(i,) for i in range(60)])
        workers = list(pool.pids.values())
        answers = ordered_results(pool, 4)
        seen = {next(answers) for _ in range(10)}
        for pid in workers:
            os.kill(pid, signal.SIGINT)
        seen.update(answers)
    assert seen == set(workers) and len(workers) == 2
    assert not any(_exists(pid) for pid in workers)


def test_leaving_in_the_middle_kills_and_reaps_the_workers():
    with contextlib.ExitStack() as stack:
        pool = start_pool(stack, 2, time.sleep, [(30,)] * 4)
        workers = list(pool.pids.values())
        pool.hand_out(4)
    assert not any(_exists(pid) for pid in workers)


def test_a_killed_worker_ends_the_run_with_one_error():
    started = time.monotonic()
    with pytest.raises(WorkerLost, match="killed by SIGKILL"):
        with contextlib.ExitStack() as stack:
            pool = start_pool(stack, 2, time.sleep, [(30,)] * 4)
            answers = ordered_results(pool, 4)
            os.kill(next(iter(pool.pids.values())), signal.SIGKILL)
            next(answers)
    assert time.monotonic() - started < 20


def test_an_answer_larger_than_the_pipe_comes_whole():
    size = 4 * pool_module._PIPE_BYTES + 3
    with contextlib.ExitStack() as stack:
        pool = start_pool(stack, 2, bytes, [(size,), (1,), (size,)])
        assert [len(v) for v in ordered_results(pool, 3)] == [size, 1, size]
