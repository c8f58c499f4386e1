"""The ordered multi-process writer of a streamed report: the reader's
workers write their kernels' JSON lines to one file descriptor themselves,
in task order (report.reader.write_report_json).  Each writer (a worker, or
the parent) gets a spill file for tasks done ahead of their turn."""

from __future__ import annotations

import errno
import multiprocessing as mp
import os


class _Sink:
    """A file descriptor the workers write a streamed report's kernels to, in
    task order: the half gigabyte of JSON a ROCm library's report holds then
    never goes through the parent (pickled, piped and copied there, it cost
    the parent as much CPU as a worker).

    A task whose turn has come (every earlier task written) writes each code
    object's records as it encodes them.  A task ahead of its turn does not
    wait for it (waiting for a large bundle parsed by the other worker idled
    the workers 1.6 s of 10 on librocsparse1 7.2.4), nor keep its records in
    memory (one bundle of that library is 111 MB of JSON): it puts them
    aside in its worker's spill file (unnamed temporary files, one per
    worker, opened before the fork) and goes on.  Whoever completes the turn
    before a finished task copies its records from the spill file to the
    output in the kernel (sendfile); a task still running when its turn
    comes copies its own, then writes directly.  A spill file is emptied
    whenever nothing in it is waiting.  The turn, the tasks put aside and
    what was written are shared between the processes; without a spill file
    a task ahead of its turn keeps its records and waits."""

    _SLOTS = 64            # tasks put aside at once (the pool hands out a few)
    # a record: task number or -1, status, spill file, offset in it, length
    _TASK, _STATUS, _FILE, _OFFSET, _LENGTH = range(5)
    RUNNING, DONE, FAILED = 0, 1, 2

    def __init__(self, fd: int, head: bytes, writers: int):
        self.fd, self.head = fd, head      # head: written before the first kernel
        fork = "fork" in mp.get_all_start_methods()
        context = mp.get_context("fork" if fork else None)
        self.turn = context.Condition()
        # [next task to write, written anything, a task failed, writeback started up to]
        self.state = context.RawArray("q", 4)
        self.records = context.RawArray("q", 5 * self._SLOTS)
        self.spills: list[int] = []
        import tempfile

        for _ in range(writers):
            try:
                spill = tempfile.TemporaryFile(prefix="spillway-spill-")    # unnamed where O_TMPFILE works
            except OSError:
                break          # fewer spill files: the other writers wait for their turn
            self.spills.append(os.dup(spill.fileno()))
            spill.close()
        # per spill file: the process using it (0: free), bytes in it not copied out yet
        self.owner = context.RawArray("q", max(len(self.spills), 1))
        self.pending = context.RawArray("q", max(len(self.spills), 1))
        self._mine: tuple[int, int] | None = None      # (pid, spill file) of this process

    def close(self) -> None:
        for spill in self.spills:
            os.close(spill)
        self.spills = []

    @property
    def opened(self) -> bool:
        return bool(self.state[1])

    def start(self) -> None:
        """Before a run's first task (task numbers start at 0 in each run;
        each run has its own workers)."""
        self.state[0], self.state[2] = 0, 0
        for slot in range(self._SLOTS):
            self.records[5 * slot + self._TASK] = -1
        for index, spill in enumerate(self.spills):
            self.owner[index], self.pending[index] = 0, 0
            os.ftruncate(spill, 0)
        self._mine = None

    def task(self, number: int) -> "_TaskOutput":
        return _TaskOutput(self, number)

    def write(self, *parts: bytes) -> None:
        _write_all(self.fd, list(parts))
        self._start_writeback()

    def write_records(self, pieces: list[bytes]) -> None:
        """The turn holder's pieces to the output (nothing once a task failed)."""
        if pieces and not self.state[2]:
            self.write(b",\n" if self.state[1] else self.head, *_joined(pieces))
            self.state[1] = 1

    _WRITEBACK_STEP = 32 << 20

    def _start_writeback(self) -> None:
        """Every 32 MiB, start writing the file's new pages to disk (POSIX_FADV_DONTNEED
        starts writeback of dirty pages on Linux), so the fsync of an atomic write waits
        for the last few megabytes, not for half a gigabyte.  Nothing for a pipe."""
        try:
            written = os.lseek(self.fd, 0, os.SEEK_CUR)
        except OSError:
            return
        started = self.state[3]
        if written - started >= self._WRITEBACK_STEP:
            try:
                os.posix_fadvise(self.fd, started, written - started, os.POSIX_FADV_DONTNEED)
            except (OSError, AttributeError):
                pass
            self.state[3] = written

    def my_spill(self) -> int | None:
        """With the lock held: this process's spill file (claimed on first use), or None."""
        pid = os.getpid()
        if self._mine is not None and self._mine[0] == pid:
            return self._mine[1]
        for index in range(len(self.spills)):
            if self.owner[index] == 0:
                self.owner[index] = pid
                self._mine = (pid, index)
                return index
        return None

    def copy_spilled(self, spill: int, offset: int, length: int) -> None:
        """With the turn held: ``length`` bytes put aside in ``spill`` to the output."""
        if length > 0 and not self.state[2]:
            self.write(b",\n" if self.state[1] else self.head)
            _copy(self.spills[spill], offset, length, self.fd)
            self.state[1] = 1
            self._start_writeback()
        self.pending[spill] -= max(length, 0)

    def pass_turn(self, number: int) -> None:
        """With the lock held and task ``number`` written (or failed): the
        turn goes on, through every later task that finished put aside."""
        self.state[0] = number + 1
        while True:
            number = self.state[0]
            record = 5 * (number % self._SLOTS)
            if self.records[record + self._TASK] != number or self.records[record + self._STATUS] == self.RUNNING:
                return
            status = self.records[record + self._STATUS]
            spill, offset, length = (self.records[record + self._FILE], self.records[record + self._OFFSET],
                                     self.records[record + self._LENGTH])
            self.records[record + self._TASK] = -1
            self.state[0] = number + 1
            if status == self.FAILED:
                self.state[2] = 1
            if spill >= 0:
                try:
                    self.copy_spilled(spill, offset, length)
                except OSError:
                    self.state[2] = 1
                    raise


class _TaskOutput:
    """One task's way into a _Sink: ``emit`` each code object's records,
    then ``finish`` (or ``abandon`` after an error writing)."""

    def __init__(self, sink: _Sink, number: int):
        self.sink, self.number = sink, number
        self.record = 5 * (number % sink._SLOTS)
        self.direct = False         # the turn is this task's: it writes to the output
        self.held: list[bytes] = []     # put aside in memory (no spill file)
        self.spill: int | None = None   # put aside in this spill file, from offset, this long
        self.offset = self.length = 0

    def emit(self, piece: bytes) -> None:
        sink = self.sink
        if not self.direct:
            with sink.turn:
                if sink.state[0] == self.number:
                    self._take_turn()
                elif self.spill is None and not self.held:
                    self._claim_record()
        if self.direct:
            sink.write_records([piece])
            return
        if self.spill is not None and not self.held:
            parts = [b",\n", piece] if self.length else [piece]
            try:
                _write_all(sink.spills[self.spill], parts, self.offset + self.length)
            except OSError:
                pass            # no room to put it aside: kept, and the task waits for its turn
            else:
                self.length += sum(map(len, parts))
                return
        self.held.append(piece)

    def _claim_record(self) -> bool:
        """With the lock held: start putting this task aside in this process's
        spill file; False when there is none (or its record is still taken)."""
        sink = self.sink
        spill = sink.my_spill()
        if spill is None or sink.records[self.record + sink._TASK] != -1:
            return False
        if sink.pending[spill] == 0:
            os.ftruncate(sink.spills[spill], 0)        # nothing in it waits: start it over
            self.offset = 0
        else:
            self.offset = os.fstat(sink.spills[spill]).st_size
        self.spill = spill
        sink.records[self.record:self.record + 5] = [self.number, sink.RUNNING, spill, self.offset, 0]
        return True

    def _take_turn(self) -> None:
        """With the lock held and the turn this task's: what it put aside goes out first."""
        sink = self.sink
        self.direct = True
        if self.spill is not None:
            sink.records[self.record + sink._TASK] = -1
            sink.pending[self.spill] += self.length
            spill, self.spill = self.spill, None
            sink.copy_spilled(spill, self.offset, self.length)
        held, self.held = self.held, []
        sink.write_records(held)

    def finish(self, failed: bool = False) -> None:
        sink = self.sink
        with sink.turn:
            if sink.state[0] != self.number and self.held:
                while sink.state[0] != self.number:     # no spill file: wait for the turn
                    sink.turn.wait()
            if sink.state[0] == self.number:
                try:
                    if failed:
                        sink.state[2] = 1
                    elif not self.direct:
                        self._take_turn()
                finally:
                    sink.pass_turn(self.number)
                    sink.turn.notify_all()
                return
            if self.spill is None:
                while sink.records[self.record + sink._TASK] != -1:     # (never, with the pool's window)
                    sink.turn.wait()
                if sink.state[0] == self.number:
                    self.finish(failed)     # the turn came meanwhile
                    return
                sink.records[self.record:self.record + 5] = [self.number, sink.RUNNING, -1, 0, 0]
            else:
                sink.records[self.record + sink._LENGTH] = self.length
                sink.pending[self.spill] += self.length
            sink.records[self.record + sink._STATUS] = sink.FAILED if failed else sink.DONE

    def abandon(self) -> None:
        """After an OSError writing: no later task writes; the turn goes on."""
        sink = self.sink
        with sink.turn:
            sink.state[2] = 1
            if sink.state[0] > self.number:
                return          # the turn went on already (the error came writing a later task's records)
            if sink.state[0] == self.number:
                try:
                    sink.pass_turn(self.number)
                except OSError:
                    pass
                finally:
                    sink.turn.notify_all()
            elif self.spill is not None:
                sink.records[self.record + sink._LENGTH] = self.length
                sink.pending[self.spill] += self.length
                sink.records[self.record + sink._STATUS] = sink.FAILED
            else:
                self.held = []
                self.finish(failed=True)


def _joined(pieces: list[bytes]) -> list[bytes]:
    """The pieces with ``,\n`` between them (buffers for one writev)."""
    parts = [b",\n"] * (2 * len(pieces) - 1)
    parts[::2] = pieces
    return parts


def _write_all(fd: int, parts: list[bytes], offset: int | None = None) -> None:
    """Write the buffers in order, with writev (pwritev at ``offset``), however
    much each call takes."""
    views = [memoryview(part) for part in parts if part]
    while views:
        done = os.writev(fd, views[:1024]) if offset is None else os.pwritev(fd, views[:1024], offset)
        if offset is not None:
            offset += done
        while views and done >= len(views[0]):
            done -= len(views.pop(0))
        if done:
            views[0] = views[0][done:]


def _copy(source: int, offset: int, length: int, fd: int) -> None:
    """``length`` bytes of the file ``source`` from ``offset`` to ``fd``'s position."""
    end = offset + length
    try:
        while offset < end:
            sent = os.sendfile(fd, source, offset, end - offset)
            if sent == 0:
                raise OSError(errno.EIO, "the spill file ended early")
            offset += sent
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        while offset < end:        # no sendfile between these two
            chunk = os.pread(source, min(end - offset, 8 << 20), offset)
            if not chunk:
                raise OSError(errno.EIO, "the spill file ended early") from None
            _write_all(fd, [chunk])
            offset += len(chunk)
