"""How the app is served: uvicorn's protocol with a request deadline, the supervisor and its workers, and the
ASGI middleware every request passes (size and rate limits, request ids, security headers). The rest of
app/ is the application itself: routes, services, schemas."""
