"""`wearsim serve`: the streaming server the simulated glasses talk to."""

from __future__ import annotations

import argparse

from candidates.providers import bundled_model_id, default_judge_model_id

EPILOG = """examples:
  wearsim serve                                  # 127.0.0.1:8765, backend `local` only, no token on loopback
  wearsim serve --backend local --backend openai:gpt-4o-mini --backend openai-realtime:gpt-realtime-2
  wearsim serve --host 0.0.0.0 --token "$WEARSIM_TOKEN" --max-sessions 8 --idle-timeout 120
  wearsim serve --host 0.0.0.0 --token "$WEARSIM_TOKEN" --allow-origin http://glasses.lan:8765
then, in another shell, the simulated glasses: wearsim simulate sc-01 --server ws://127.0.0.1:8765

A client names its backend in the hello; the server accepts only the ids
given with --backend (exactly, after stripping spaces), so a client can never
make the server open a file (local:PATH, replay:PATH are for the operator).
Describers likewise: opencv and authored always; ocr (offline, but about
0.7 s of CPU a frame) and a model describer only when given with --describer,
so a client cannot spend the server's keys or its CPU on one.

Only the server's own pages (and origins given with --allow-origin) may open
a session or save a recording: a page on any other origin, another port on
localhost included, is refused, and so is a request naming another Host
than an address of this machine, localhost, the --host name or an allowed
origin's host (DNS rebinding). Clients that send no Origin (the simulated
glasses, curl) are accepted on loopback, or with the token.

Proactive sessions: the server asks the model, now and then, whether anything
needs saying unasked; this help calls that question a check-in (the flags and
the records say probe).
"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "serve",
        help="run the WebSocket streaming server",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 for every interface, "
        "which needs --token)",
    )
    p.add_argument("--port", type=int, default=8765, help="the port to listen on (default 8765)")
    p.add_argument("--token", help="required from clients (or WEARSIM_TOKEN); mandatory off loopback")
    p.add_argument("--asr-model", help="CTranslate2 Whisper dir or model name (default: bundled tiny.en)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint for openai:* backends")
    p.add_argument("--describer-base-url", help="OpenAI-compatible endpoint for openai:* describers")
    from perception.describer_spec import DESCRIBERS, offered

    opt_in = ", ".join(f"{name} ({DESCRIBERS[name].what})" for name in offered("opt-in"))
    models = " or ".join(d.form for d in DESCRIBERS.values() if d.model)
    p.add_argument(
        "--describer",
        action="append",
        metavar="ID",
        help=f"a describer clients may ask for: {opt_in}, or a model describer ({models}, e.g. "
        f"{default_judge_model_id()}) (repeatable; {' and '.join(offered('default'))} are always offered; "
        "a model describer spends this server's key)",
    )
    p.add_argument(
        "--backend",
        action="append",
        metavar="ID",
        help="a backend id clients may ask for (repeatable). The ids given replace the default, "
        f"{bundled_model_id()}: add --backend {bundled_model_id()} to offer it as well",
    )
    p.add_argument(
        "--frame-policy",
        metavar="POLICY",
        help="frames that reach the assistant when a hello names no policy: end, fps:N, speech:N/M or "
        "change:T[/R] (default: end for a chat backend, fps:1 for a realtime API)",
    )
    p.add_argument(
        "--probe-min-gap",
        type=float,
        default=1.0,
        metavar="S",
        help="proactive sessions: at least S seconds of the server's wall clock between one session's "
        "check-ins (default 1); a check-in due sooner is skipped and counted (docs/proactive.md)",
    )
    p.add_argument(
        "--probe-rate",
        type=float,
        default=1.0,
        metavar="N",
        help="proactive sessions: at most N check-ins a second over the whole server, shared equally "
        "among the proactive sessions open (default 1)",
    )
    p.add_argument(
        "--no-probe-hold",
        action="store_true",
        help="proactive sessions: let check-ins start while another session's user speaks or waits for "
        "an answer (by default a spoken turn goes first)",
    )
    p.add_argument("--max-sessions", type=int, default=16, help="concurrent sessions (default 16)")
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="close a session after S seconds with nothing from the client and nothing in flight (default 300)",
    )
    p.add_argument(
        "--record",
        metavar="DIR",
        help="let the browser page's recording studio save scenario media into DIR (media layout: "
        "DIR/<scenario>/turn_1.mp4, turn_1.wav, ..., indexed in DIR/index.json); off by default",
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="a page origin (scheme://host[:port]) besides the server's own that may open sessions and "
        "save recordings; its host may also name the server (repeatable)",
    )
    p.set_defaults(run=run)


def run(args) -> int:
    import errno
    import ipaddress
    import os
    import sys
    from pathlib import Path

    import uvicorn

    from perception.describer_spec import offered
    from streaming.local_server import server_config
    from streaming.server_settings import ServerSettings

    token = args.token or os.environ.get("WEARSIM_TOKEN")
    try:
        loopback = ipaddress.ip_address(args.host).is_loopback
    except ValueError:
        loopback = args.host == "localhost"
    if not loopback and not token:
        print("error: binding to a non-loopback address needs --token (or WEARSIM_TOKEN)", file=sys.stderr)
        return 2
    frame_policy = None
    if args.frame_policy is not None:
        from perception.frame_policy import parse_frame_policy

        try:
            frame_policy = parse_frame_policy(args.frame_policy)
        except ValueError as exc:
            print(f"error: --frame-policy: {exc}", file=sys.stderr)
            return 2
    if not (args.probe_rate > 0 and 0 <= args.probe_min_gap <= 3600):
        print("error: --probe-rate must be above 0 and --probe-min-gap from 0 to 3600 seconds", file=sys.stderr)
        return 2
    if args.max_sessions < 1 or args.idle_timeout <= 0:
        print("error: --max-sessions must be at least 1 and --idle-timeout above 0", file=sys.stderr)
        return 2
    backends = tuple(dict.fromkeys(b.strip() for b in (args.backend or [bundled_model_id()]) if b.strip()))
    if not backends:
        print("error: --backend needs a model id", file=sys.stderr)
        return 2
    from candidates.model_ids import missing_credentials, retired_problem

    missing = []
    for flag, ids, base_url, url_flag in (
        ("--backend", backends, args.base_url, "--base-url"),
        (
            "--describer",
            [d for d in args.describer or () if not _runs_here(d)],
            args.describer_base_url,
            "--describer-base-url",
        ),
    ):
        for model_id in ids:
            try:
                problem = retired_problem(model_id) or missing_credentials(
                    model_id, base_url=base_url, base_url_flag=url_flag
                )
            except ValueError as exc:
                problem = str(exc)
            if problem:
                missing.append(f"{flag} {model_id}: {problem}")
    if missing:  # refused at start-up, every one at once: a client would only meet them one by one
        print("error: the server cannot offer what it was asked to:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 2
    try:
        ipaddress.ip_address(args.host)
        names: tuple[str, ...] = ()
    except ValueError:
        names = (args.host,)  # a name the server was bound to: requests may use it as their Host
    try:
        settings = ServerSettings(
            token=token,
            asr_model=args.asr_model,
            backend_base_url=args.base_url,
            describer_base_url=args.describer_base_url,
            allowed_backends=backends,
            allowed_describers=(*offered("default"), *(args.describer or ())),
            max_sessions=args.max_sessions,
            idle_timeout_s=args.idle_timeout,
            record_dir=Path(args.record).resolve() if args.record else None,
            allowed_origins=tuple(args.allow_origin or ()),
            allowed_hosts=names,
            frame_policy=frame_policy,
            probe_min_gap_s=args.probe_min_gap,
            probe_rate=args.probe_rate,
            probe_hold_turns=not args.no_probe_hold,
        )
    except ValueError as exc:
        print(f"error: --allow-origin: {exc}", file=sys.stderr)
        return 2
    try:  # bound before anything is announced: a busy port is one line, not a URL and then a failure
        listening = bind_port(args.host, args.port)
    except OSError as exc:
        print(
            f"error: --port {args.port}: cannot listen on {args.host}:{args.port} "
            f"({'already in use: choose another --port' if exc.errno == errno.EADDRINUSE else exc.strerror or exc})",
            file=sys.stderr,
        )
        return 2
    print(
        f"wearsim streaming server on ws://{args.host}:{args.port}/v1/session; the live page at "
        f"http://{args.host}:{args.port}/ (token {'required' if token else 'not required'}; backends: "
        f"{', '.join(backends)}; describers: {', '.join(settings.allowed_describers)}"
        f"{'; recording into ' + str(settings.record_dir) if settings.record_dir else ''})",
        file=sys.stderr,
    )
    uvicorn.Server(server_config(settings, args.host, args.port)).run(sockets=[listening])
    return 0


def _runs_here(describer: str) -> bool:
    """A describer of the registry that needs no model (and so no key): offered as named."""
    from perception.describer_spec import DESCRIBERS

    entry = DESCRIBERS.get(describer)
    return entry is not None and not entry.model


def bind_port(host: str, port: int):
    """A listening socket on host:port, as uvicorn would bind it (SO_REUSEADDR, IPv6 for an IPv6 host);
    OSError (EADDRINUSE: another process listens there) before the server announces anything."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock
