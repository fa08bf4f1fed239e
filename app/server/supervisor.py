"""uvicorn's worker supervisor, told at once when a worker dies."""

from uvicorn.supervisors import Multiprocess


class Supervisor(Multiprocess):
    """Every 0.5 s uvicorn's supervisor pings each worker through a pipe and waits up to
    timeout_worker_healthcheck (30 s here) for the answer. It also keeps the worker's end of that pipe
    open in its own process, so a worker that dies during the wait (a busy worker answers late) is seen
    only when the wait ends: half a minute with no replacement, and with one worker no app at all.

    With that end closed here (the worker has its own copy from the moment it starts), the pipe reads
    as closed as soon as the worker is gone, and the replacement starts at once.
    """

    def keep_subprocess_alive(self) -> None:
        for process in self.processes:
            # uvicorn's own attribute, not a public one: if a release renames it, the pipe stays open as
            # before (test_faults' SIGSTOP test then fails) rather than the supervisor loop raising.
            child_end = getattr(process, "child_conn", None)
            if child_end is not None:
                child_end.close()  # a no-op once closed
        super().keep_subprocess_alive()
