"""The live layer's tests: WebSocket consumers, broadcast, timers, real processes.

The helpers that start real daphne / Celery / Redis processes live in `tests/processes.py`.
"""
