"""`python -m crisp_site.serve [daphne options] crisp_site.asgi:application`: daphne, with
WebSocket protocol failures closed by a close frame instead of a dropped TCP connection.

daphne caps an incoming WebSocket message at `--websocket-max-message-size` (1 MiB by default,
docs/PROTOCOL.md), but autobahn, underneath, "fails by drop" by default: a client whose frame was
too big saw its TCP connection reset with no close frame and no reason, indistinguishable from a
network fault, so it reconnected and sent the same frame again. With `failByDrop` off, autobahn
performs the closing handshake instead: close code 1009 (message too big) with a reason, and
1002 for other protocol violations. daphne offers no option for this, so this entry point sets it
on daphne's WebSocket factory and then runs daphne's own command line unchanged.
"""

from __future__ import annotations

import sys
from typing import Any

from daphne import server
from daphne.cli import CommandLineInterface
from daphne.ws_protocol import WebSocketFactory


class CleanClosingWebSocketFactory(WebSocketFactory):
    """daphne's factory, failing a connection with a close frame (never by dropping TCP)."""

    def setProtocolOptions(self, **options: Any) -> None:
        options.setdefault("failByDrop", False)
        super().setProtocolOptions(**options)


def main() -> None:
    server.WebSocketFactory = CleanClosingWebSocketFactory
    sys.exit(CommandLineInterface.entrypoint())


if __name__ == "__main__":
    main()
