"""The scheduling loop shared by generation and the benchmark (:func:`kinhec.util.executors.completed_tasks`)."""

from __future__ import annotations

from concurrent.futures import Future

from kinhec.util.executors import InlineExecutor, completed_tasks


class _Recorder:
    """An executor whose tasks complete one per ``wait_any`` call, recording how many were in flight."""

    capacity = 2

    def __init__(self):
        self.submitted, self.in_flight = [], []

    def submit(self, task):
        fut = Future()
        fut.set_result(task * 10)
        self.submitted.append(task)
        return fut

    def wait_any(self, futures, timeout):
        self.in_flight.append(len(futures))
        return futures[:1]


def test_tasks_start_in_order_and_at_most_twice_the_capacity_run():
    ex = _Recorder()
    todo = list(range(9))
    pending, running = list(reversed(todo)), {}
    done = [(task, fut.result()) for task, fut in completed_tasks(ex, pending, running)]
    assert ex.submitted == todo and [t for t, _ in done] == todo
    assert all(r == 10 * t for t, r in done)
    assert max(ex.in_flight) == 2 * ex.capacity and running == {} and pending == []


def test_clearing_pending_or_stop_starts_no_more_and_the_running_ones_finish():
    ex = _Recorder()
    pending, running = list(reversed(range(9))), {}
    seen = []
    for task, _ in completed_tasks(ex, pending, running):
        seen.append(task)
        if task == 1:
            pending.clear()  # what a fail-fast run does after a failed shard
    # four in flight, one more started when task 0 finished; none after the clearing, the started ones finish
    assert ex.submitted == [0, 1, 2, 3, 4] and seen == [0, 1, 2, 3, 4]

    ex = _Recorder()
    seen = [t for t, _ in completed_tasks(ex, list(reversed(range(9))), {}, stop=lambda: len(ex.submitted) >= 5)]
    assert seen == [0, 1, 2, 3, 4]


def test_inline_executor_runs_each_task_in_this_process():
    ex = InlineExecutor(lambda x: x + 1)
    out = {task: fut.result() for task, fut in completed_tasks(ex, [3, 2, 1], {})}
    assert out == {1: 2, 2: 3, 3: 4}
