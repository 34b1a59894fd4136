"""Run cases in a child process that a crash, an abort or a hang cannot take down the caller.

``Worker(run).call(case, timeout)`` runs ``run(case)`` in a child (spawned, so nothing of
the parent's state is inherited) and returns its result, ``("timeout", seconds)`` when it
takes longer (the child is killed and replaced) or ``("crash", exit code)`` when the child
dies (XLA's CHECK failures abort the process).
"""
from __future__ import annotations

import multiprocessing as mp


def _serve(run, conn):
    while True:
        case = conn.recv()
        try:
            conn.send(run(case))
        except BaseException as e:        # noqa: BLE001 - every failure is a result here
            conn.send(("error", f"{type(e).__name__}: {e}"))


class Worker:
    def __init__(self, run):
        self._run = run
        self._proc = None

    def _start(self):
        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(self._run, child), daemon=True)
        self._proc.start()

    def call(self, case, timeout: float):
        if self._proc is None or not self._proc.is_alive():
            self._start()
        self._conn.send(case)
        if self._conn.poll(timeout):
            try:
                return self._conn.recv()
            except (EOFError, ConnectionError):
                pass
        else:
            self.close()
            return ("timeout", timeout)
        code = self._proc.exitcode if self._proc.join(5) is None else None
        self._proc = None
        return ("crash", code)

    def close(self):
        if self._proc is not None:
            self._proc.kill()
            self._proc.join()
            self._proc = None
