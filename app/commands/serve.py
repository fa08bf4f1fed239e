"""heads-positions serve: the web app under uvicorn."""

import os


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="serve the web app", description="Serve the web app with uvicorn.")
    p.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"),
                   help="address to listen on; 0.0.0.0 lets a classroom reach this machine (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")), help="default 8000, or $PORT")
    p.add_argument("--workers", type=int, default=int(os.environ.get("WORKERS", "1")),
                   help="worker processes; one per core is a good start (default 1, or $WORKERS)")
    p.set_defaults(run=run)


def run(args) -> int:
    import uvicorn

    # Workers import torch before they answer the supervisor's ping; two at once on two cores can take
    # longer than uvicorn's 5 s default, and a worker killed for it restarts from scratch.
    uvicorn.run("app.main:create_app", factory=True, host=args.host, port=args.port, workers=args.workers,
                timeout_graceful_shutdown=5, timeout_worker_healthcheck=30)
    return 0
