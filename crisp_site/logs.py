"""Logging filters of the site (settings `LOGGING`)."""

from __future__ import annotations

import logging


class ClientErrorFilter(logging.Filter):
    """Turn a client's-mistake record into one WARNING line: no traceback, not ERROR.

    Django logs a request it refuses as malformed (too many form fields, a body over the
    limit) on `django.security.<exception>` at ERROR with the exception's traceback. The
    request was answered with a 400; nothing failed on the server, so an operator's error
    alerts must not fire for it. The record is kept (a burst of them is worth seeing).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info = None
        record.exc_text = None
        return True


class ClientRequestFilter(logging.Filter):
    """A 4xx that `django.request` logs with a traceback becomes one line without it.

    Django answers a body it cannot parse (a multipart post without a boundary, a body cut off
    mid-read) with a 400 and logs a WARNING carrying the parser's whole traceback. The fault
    is the client's, so the line stays and the traceback goes; a 5xx keeps its traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
