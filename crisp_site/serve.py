"""`python -m crisp_site.serve [daphne options] crisp_site.asgi:application`: daphne, with
WebSocket protocol failures closed by a close frame instead of a dropped TCP connection.

daphne caps an incoming WebSocket message at `--websocket-max-message-size` (1 MiB by default,
docs/PROTOCOL.md), but autobahn, underneath, "fails by drop" by default: a client whose frame was
too big saw its TCP connection reset with no close frame and no reason, indistinguishable from a
network fault, so it reconnected and sent the same frame again. With `failByDrop` off, autobahn
performs the closing handshake instead: close code 1009 (message too big) with a reason, and
1002 for other protocol violations. daphne offers no option for this, so this entry point sets it
on daphne's WebSocket factory and then runs daphne's own command line unchanged.

`--reuse-port` (ours, taken out before daphne sees the line): N processes started with the same
`-b HOST -p PORT` all serve that one port (README, "Scaling out"). Each binds its own listening
socket with `SO_REUSEPORT`, and the kernel spreads new connections over the processes. daphne
cannot ask Twisted for that (its `--fd` fails on Twisted's endpoint parser: "Unknown endpoint
type: 'fd'", django/daphne#557), so the socket is handed to daphne the way systemd's socket
activation hands one (`-e systemd:domain=INET:index=0`: file descriptor 3, `LISTEN_FDS`,
`LISTEN_PID`) -- the same endpoint a systemd socket unit with `ReusePort=yes` uses in production.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any


def _clean_closing_factory() -> type:
    """daphne's WebSocket factory, failing a connection with a close frame (never by dropping
    TCP). Made when daphne runs, not at import: importing daphne starts Twisted's reactor,
    which opens descriptors of its own (``reuse_port`` must come first)."""
    from daphne.ws_protocol import WebSocketFactory

    class CleanClosingWebSocketFactory(WebSocketFactory):
        def setProtocolOptions(self, **options: Any) -> None:
            options.setdefault("failByDrop", False)
            super().setProtocolOptions(**options)

    return CleanClosingWebSocketFactory


#: Where socket activation hands the first socket (sd_listen_fds(3): SD_LISTEN_FDS_START).
_LISTEN_FD = 3


def reuse_port(argv: list[str]) -> list[str]:
    """daphne's arguments with `--reuse-port -b HOST -p PORT` replaced by a socket of ours on
    HOST:PORT with `SO_REUSEPORT`, handed over as systemd's socket activation does."""
    if "--reuse-port" not in argv:
        return argv
    args = [a for a in argv if a != "--reuse-port"]
    found: dict[str, str] = {}
    out: list[str] = []
    i = 0
    while i < len(args):
        name = {"-b": "host", "--bind": "host", "-p": "port", "--port": "port"}.get(args[i])
        if name is not None and i + 1 < len(args):
            found[name] = args[i + 1]
            i += 2
            continue
        out.append(args[i])
        i += 1
    if "port" not in found:
        raise SystemExit("--reuse-port needs -p PORT (and -b HOST, else 127.0.0.1)")
    host = found.get("host", "127.0.0.1")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host.strip("[]"), int(found["port"])))
    sock.listen(1024)
    if sock.fileno() != _LISTEN_FD:
        try:
            os.fstat(_LISTEN_FD)
        except OSError:
            pass  # free: ours to take
        else:
            raise SystemExit(f"--reuse-port: file descriptor {_LISTEN_FD} is already open")
        os.dup2(sock.fileno(), _LISTEN_FD)  # inheritable, as socket activation leaves it
        sock.close()
    else:
        os.set_inheritable(_LISTEN_FD, True)
        sock.detach()  # the descriptor is daphne's now: not closed with this object
    # Twisted reads these when its endpoints module loads (daphne, after this); systemd 227+
    # names each socket too, and Twisted wants as many names as descriptors.
    os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()), LISTEN_FDNAMES="daphne")
    domain = "INET6" if family == socket.AF_INET6 else "INET"
    return [*out, "-e", f"systemd:domain={domain}:index=0"]


def main() -> None:
    sys.argv[1:] = reuse_port(sys.argv[1:])  # before daphne opens anything
    from daphne import server
    from daphne.cli import CommandLineInterface

    server.WebSocketFactory = _clean_closing_factory()
    sys.exit(CommandLineInterface.entrypoint())


if __name__ == "__main__":
    main()
