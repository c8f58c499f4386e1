"""report.ordered_writer._Sink: tasks ahead of their turn put their records aside in
their process's spill file, and they reach the output in task order (copied
by whoever completes the turn before them, or by the task itself when its
turn comes while it runs); a failed task stops every later write; nothing is
lost or reordered, with or without spill files, in one process or several."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import random
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from spillway.report.ordered_writer import _Sink

HEAD = b"HEAD["


def expected_bytes(tasks: list[list[bytes] | None]) -> bytes:
    """What the sink must hold: the pieces in task order up to the first failed task."""
    pieces: list[bytes] = []
    for task in tasks:
        if task is None:
            break
        pieces.extend(task)
    return HEAD + b",\n".join(pieces) if pieces else b""


@contextlib.contextmanager
def started_sink(folder: Path, writers: int):
    """A started _Sink writing to a new file in ``folder``, with ``writers`` spill files."""
    with open(folder / "out", "w+b") as out:
        sink = _Sink(out.fileno(), HEAD, writers=writers)
        sink.start()
        try:
            yield sink
        finally:
            sink.close()


def written(sink: _Sink) -> bytes:
    """What the sink's output file holds."""
    return os.pread(sink.fd, os.fstat(sink.fd).st_size, 0)


def run_task(sink: _Sink, number: int, task: list[bytes] | None) -> None:
    """A task as _parse_units runs it: each piece emitted, then finished
    (None: a task that fails).  (A failing task may have written some of its
    records while it had the turn: the caller raises and the output is
    discarded, as an atomic write discards it.)"""
    output = sink.task(number)
    for piece in task or ():
        output.emit(piece)
    output.finish(failed=task is None)


task_lists = st.lists(st.one_of(st.none(), st.lists(st.binary(min_size=1, max_size=40), max_size=4)),
                      min_size=1, max_size=9)


@settings(max_examples=150, deadline=None)
@given(tasks=task_lists, data=st.data())
def test_any_finishing_order_writes_task_order(tmp_path_factory, tasks, data):
    order = data.draw(st.permutations(range(len(tasks))))
    with started_sink(tmp_path_factory.mktemp("sink"), writers=1) as sink:
        assert sink.spills
        for number in order:          # one process: a task at a time, in any order
            run_task(sink, number, tasks[number])          # ahead of its turn: put aside, no waiting
        assert sink.state[0] == len(tasks)               # every turn passed
        assert sink.pending[0] == 0                      # nothing left waiting in the spill file
        assert written(sink) == expected_bytes(tasks)
        assert sink.opened == bool(expected_bytes(tasks))


def test_the_spill_file_is_emptied_once_nothing_waits(tmp_path):
    with started_sink(tmp_path, writers=1) as sink:
        run_task(sink, 1, [b"x" * 1000])
        assert os.fstat(sink.spills[0]).st_size == 1000 and sink.pending[0] == 1000
        run_task(sink, 2, [b"z" * 100])                # appended after what still waits
        assert os.fstat(sink.spills[0]).st_size == 1100
        run_task(sink, 0, [b"a"])
        assert sink.pending[0] == 0
        run_task(sink, 4, [b"y" * 10])                 # starts the spill file over
        assert os.fstat(sink.spills[0]).st_size == 10
        run_task(sink, 3, [b"b"])
        assert written(sink) == HEAD + b"a,\n" + b"x" * 1000 + b",\n" + b"z" * 100 + b",\nb,\n" + b"y" * 10


def test_a_task_whose_turn_comes_while_it_runs_writes_in_order(tmp_path):
    with started_sink(tmp_path, writers=2) as sink:
        second = sink.task(1)
        second.emit(b"b1")                  # ahead of its turn: put aside
        run_task(sink, 0, [b"a"])            # (as another process would)
        assert written(sink) == HEAD + b"a"
        second.emit(b"b2")                  # its turn now: what it put aside goes out first
        assert written(sink) == HEAD + b"a,\nb1,\nb2"
        second.finish()
        run_task(sink, 2, [b"c"])
        assert written(sink) == HEAD + b"a,\nb1,\nb2,\nc"


def test_without_a_spill_file_a_task_waits_for_its_turn(tmp_path):
    with started_sink(tmp_path, writers=0) as sink:     # as when no temporary file could be made
        early = threading.Thread(target=run_task, args=(sink, 1, [b"second", b"third"]))
        early.start()
        time.sleep(0.2)
        assert early.is_alive() and written(sink) == b""
        run_task(sink, 0, [b"first"])
        early.join(10)
        assert not early.is_alive()
        assert written(sink) == HEAD + b"first,\nsecond,\nthird"


def test_an_error_writing_stops_every_later_task(tmp_path):
    with started_sink(tmp_path, writers=1) as sink:
        run_task(sink, 2, [b"later"])
        run_task(sink, 0, [b"first"])
        output = sink.task(1)
        output.emit(b"x")
        output.abandon()                  # as after an OSError writing
        run_task(sink, 3, [b"last"])
        assert sink.state[0] == 4 and sink.state[2] == 1
        assert written(sink) == HEAD + b"first,\nx"


def _worker(sink: _Sink, numbers: list[int], tasks, delays) -> None:
    for number in numbers:
        output = sink.task(number)
        for piece in tasks[number] or ():
            time.sleep(delays[number])
            output.emit(piece)
        output.finish(failed=tasks[number] is None)
    os._exit(0)


@pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="needs fork")
@pytest.mark.parametrize("seed", range(6))
def test_forked_writers_finishing_in_any_order(tmp_path, seed):
    """Three processes share the tasks; early ones are spilled and copied by
    another process (sendfile across processes through the inherited file)."""
    chance = random.Random(seed)
    tasks = [[bytes([65 + i % 26]) * chance.randrange(1, 300_000) for _ in range(chance.randrange(0, 4))]
             for i in range(30)]
    if seed % 3 == 2:
        tasks[chance.randrange(5, 30)] = None
    delays = [chance.choice([0, 0, 0.001, 0.02]) for _ in tasks]
    numbers = list(range(len(tasks)))
    share = [numbers[i::3] for i in range(3)]
    with started_sink(tmp_path, writers=3 if seed < 4 else 1) as sink:   # (then two hold in memory)
        context = mp.get_context("fork")
        processes = [context.Process(target=_worker, args=(sink, part, tasks, delays)) for part in share]
        for process in processes:
            process.start()
        for process in processes:
            process.join(60)
            assert process.exitcode == 0
        assert sink.state[0] == len(tasks)
        assert written(sink) == expected_bytes(tasks)


def test_no_room_to_put_aside_waits_for_the_turn_instead(tmp_path, monkeypatch):
    from spillway.report import ordered_writer

    with started_sink(tmp_path, writers=1) as sink:
        real = ordered_writer._write_all
        calls = []

        def full(fd, parts, offset=None):
            if fd == sink.spills[0]:
                calls.append(offset)
                if len(calls) > 1:         # the first piece fits, the rest do not
                    raise OSError(28, "No space left on device")
            real(fd, parts, offset)

        monkeypatch.setattr(ordered_writer, "_write_all", full)
        early = threading.Thread(target=run_task, args=(sink, 1, [b"second", b"third", b"fourth"]))
        early.start()
        time.sleep(0.3)
        assert early.is_alive()
        run_task(sink, 0, [b"first"])
        early.join(10)
        assert not early.is_alive()
        assert written(sink) == HEAD + b"first,\nsecond,\nthird,\nfourth"
        assert sink.pending[0] == 0


def test_a_task_failing_ahead_of_its_turn_writes_nothing_put_aside(tmp_path):
    with started_sink(tmp_path, writers=1) as sink:
        failing = sink.task(1)
        failing.emit(b"put aside, then the task fails")
        failing.finish(failed=True)
        run_task(sink, 2, [b"later"])
        run_task(sink, 0, [b"first"])
        assert sink.state[0] == 3 and sink.state[2] == 1 and sink.pending[0] == 0
        assert written(sink) == HEAD + b"first"
