"""The Celery app. Tasks live in each app's `tasks.py`; settings are the `CELERY_*` Django ones.

Database connections in the worker: Celery's Django fixup closes every connection before and
after each task (and, in a prefork child, the whole connection pool) unless `CELERY_DB_REUSE_MAX`
is set; at timer rates that was a new PostgreSQL backend per task, whose start-up cost as much
CPU as the task. The settings set `CELERY_DB_REUSE_MAX`, so the fixup closes only every that many
tasks, and the handlers below do what Django does around a request instead: hand the connection
back when it is obsolete or unusable (`close_old_connections`). With the PostgreSQL pool that
returns it to the pool (no new backend); a connection that broke is replaced, not reused.

Timers: each worker process that runs tasks also runs the loop that fires due deadlines
(`games.timers`), started by the signals below.

Garbage collection: once a worker process is set up, everything alive in it is frozen out of
the collector's generations (`games.bots.base.freeze_long_lived`), so the generation-2 passes a
computer player's search triggers walk only the search's own objects, not Django's and
Celery's; measured in bench/RESULTS.md ("The budget's maximum").
"""

import logging
import os
from typing import Any

from celery import Celery
from celery.signals import (
    after_setup_logger,
    task_postrun,
    task_prerun,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutting_down,
)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crisp_site.settings")

app = Celery("crisp_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
@task_postrun.connect
def _release_database_connections(**_kwargs: Any) -> None:
    """Around each task, as around a request: drop a broken connection, return a pooled one."""
    from django.db import close_old_connections

    close_old_connections()


@worker_process_init.connect  # a prefork child (make run), once it is set up
@worker_ready.connect  # the main process, which runs the tasks of a threads or solo pool
def _freeze_long_lived_objects(**_kwargs: Any) -> None:
    """Keep the collector's generation-2 passes out of the bots' CPU budgets (module doc)."""
    from games.bots.base import freeze_long_lived

    freeze_long_lived()


@worker_process_init.connect  # a prefork child, or a solo pool's process
def _start_timers_in_this_process(**_kwargs: Any) -> None:
    """Fire due deadlines from this process (games/timers.py): where the tasks run."""
    from games import tasks, timers

    timers.start_loop(tasks.fire_timer)


@worker_ready.connect
def _start_timers_in_a_threads_pool(sender: Any = None, **_kwargs: Any) -> None:
    """A threads pool runs its tasks in the main process, which no ``worker_process_init``
    reaches; a prefork parent forks its children and runs no task, so it gets no loop (its
    threads and connections must not be inherited by a child forked later)."""
    from celery.concurrency.thread import TaskPool

    if isinstance(getattr(sender, "pool", None), TaskPool):
        from games import tasks, timers

        timers.start_loop(tasks.fire_timer)


@worker_shutting_down.connect  # the main process (a threads or solo pool's loop lives here)
@worker_process_shutdown.connect  # a prefork child
def _stop_timers_in_this_process(**_kwargs: Any) -> None:
    """Stop popping before the process's executors shut down: an entry popped after that
    could not be fired (the loop would put it back, but stopping first is cleaner)."""
    from games import timers

    timers.stop_loop()


@after_setup_logger.connect
def _quiet_routine_task_lines(**_kwargs: Any) -> None:
    """Under `make run` (which sets ``CRISP_QUIET_TASK_LINES``), no "Task … received" /
    "… succeeded" pair for every task: the sweep runs every 2 s and those lines buried the URL.
    Failures are still logged (at ERROR), and the tasks' own INFO lines ("sweep fired …") stay.
    A worker started any other way logs as Celery does by default."""
    if os.environ.get("CRISP_QUIET_TASK_LINES"):
        for name in ("celery.app.trace", "celery.worker.strategy"):
            logging.getLogger(name).setLevel(logging.WARNING)
