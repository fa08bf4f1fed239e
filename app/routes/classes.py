"""Class mode's API: the teacher leads, the students join and answer (docs/class-mode.md)."""

import hmac
from collections.abc import Awaitable
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.responses import StreamingResponse

from app.deps import AppSettings, ClassesDep, Events, join_guard, join_limit
from app.schemas.classes import Answer, Answered, ClassCode, ClassView, Done, Joined, NewClass, StepMove, StudentId
from app.schemas.compare import ERROR_RESPONSES, ErrorMessage
from app.services.class_events import event_stream
from app.services.classes import ClassError
from app.services.join_links import join_links
from app.services.lesson import qr_svg
from app.settings import Settings

router = APIRouter(prefix="/api/classes", tags=["classes"])


async def bearer_token(authorization: Annotated[str | None, Header(
        description="Bearer <teacher_token> (from POST /api/classes) for the teacher's actions; Bearer "
                    "<student_token> (from POST /api/classes/{code}/join) for a student's answers.")] = None
                       ) -> str | None:
    # An optional header rather than a security scheme: the class's rules decide between 401 and 403.
    scheme, _, token = (authorization or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def guarded(request: Request, code: ClassCode) -> str:
    """The code of a join attempt: refused (429) while this address has guessed too many unknown codes."""
    join_guard(request).check(address(request))
    return code


def address(request: Request) -> str:
    """The client's address: behind a proxy, the one uvicorn read from X-Forwarded-For, which it trusts only
    from the addresses in FORWARDED_ALLOW_IPS (docs/class-mode.md, "Behind a proxy")."""
    return request.client.host if request.client else "?"


async def _known(request: Request, lookup: Awaitable):
    """lookup's result; a 404 (unknown code) counts against the address."""
    try:
        return await lookup
    except ClassError as error:
        if error.status == 404:
            join_guard(request).add(address(request))
        raise


def _creator(request: Request, settings: Settings, key: str | None) -> str | None:
    """The address a new class counts against, or None for a holder of HP_TEACHER_KEY (not counted)."""
    expected = settings.teacher_key
    if expected is None:
        return address(request)
    if key is None:
        raise ClassError(401, "teacher_key_missing",
                         "this server asks for the teacher key to start a class: send it as X-Teacher-Key")
    if not hmac.compare_digest(key.encode(), expected.get_secret_value().encode()):
        raise ClassError(403, "teacher_key_wrong", "this is not the teacher key of this server")
    return None


Token = Annotated[str | None, Depends(bearer_token)]
GuardedCode = Annotated[str, Depends(guarded)]


def _responses(**described: str) -> dict:
    """The error statuses of one route, each described by the error types it may carry (detail[0].type)."""
    return {**ERROR_RESPONSES, **{int(status[1:]): {"model": ErrorMessage, "description": text}
                                  for status, text in described.items()}}


STORE_DOWN = "class_store_unavailable: the class store (SQLite or Redis) does not answer; Retry-After says when " \
             "to try again."
NOT_FOUND = "class_not_found: no class with this code (never opened, ended, or expired)."
TOO_MANY_MISSES = "too_many_unknown_codes: too many unknown codes from this address in a minute (Retry-After)."
TEACHER = "teacher_only (no token) or teacher_token_wrong."


@router.post("", response_model=NewClass, status_code=201, responses=_responses(
    s401="teacher_key_missing: HP_TEACHER_KEY is set and no X-Teacher-Key was sent.",
    s403="teacher_key_wrong.",
    s429="too_many_classes_from_address: HP_CLASSES_PER_HOUR classes from this address in the last hour "
         "(Retry-After; ctx: limit, minutes, retry_after).",
    s503="too_many_classes_open (ctx: max_classes), no_free_code, or " + STORE_DOWN))
async def create_class(request: Request, classes: ClassesDep, settings: AppSettings,
                       x_teacher_key: Annotated[str | None, Header(
                           description="HP_TEACHER_KEY, when the server sets one; otherwise not needed.")] = None):
    """Open a class at step 1. Keep teacher_token secret: it alone moves, reveals, locks and ends the class."""
    code, token = await classes.create(_creator(request, settings, x_teacher_key))
    join_url, urls, loopback = await join_links(request, code)
    return {"code": code, "teacher_token": token, "join_url": join_url, "join_urls": urls, "loopback": loopback}


@router.get("/{code}", response_model=ClassView, response_model_exclude_none=True, responses=_responses(
    s403="teacher_token_wrong: a token that is not the teacher's.", s404=NOT_FOUND, s429=TOO_MANY_MISSES,
    s503=STORE_DOWN))
async def get_class(request: Request, code: GuardedCode, classes: ClassesDep, token: Token):
    """The class's step, lock, and how many joined and answered; with the teacher's token, also the spread
    (a student's token gets the same view as none)."""
    state = await _known(request, classes.state(code))
    view = {"step": state.step, "revealed": state.revealed, "joined": state.joined, "answered": state.answered,
            "locked": state.locked}
    if await classes.is_teacher(code, token, student_ok=True):  # a student's page may send its own token
        view["counts"] = await classes.counts(code, state)
    return view


@router.post("/{code}/join", response_model=Joined, status_code=201, responses={**_responses(
    s403="class_locked: the teacher closed joining (a student coming back with their token still gets in).",
    s404=NOT_FOUND, s409="class_full (ctx: max_students).",
    s429=TOO_MANY_MISSES + " Or too_many_joins_from_address: HP_JOINS_PER_MINUTE new students from this address.",
    s503=STORE_DOWN), 200: {"model": Joined, "description": "A student who came back with their own token."}})
async def join(request: Request, response: Response, code: GuardedCode, classes: ClassesDep, token: Token):
    """Join the class as a new student (201), or, with Authorization: Bearer <student_token>, come back as the
    same student (200, with their answers). A token that is not this class's is ignored: a new student."""
    student = await _known(request, classes.student(code, token))
    if student is not None:
        response.status_code = 200
        return {"student": student, "student_token": token, "answers": await classes.answers_of(code, student)}
    limit = join_limit(request)
    limit.check(address(request))
    student, token = await _known(request, classes.join(code))
    limit.add(address(request))
    return {"student": student, "student_token": token, "answers": {}}


@router.post("/{code}/step", response_model=Done, responses=_responses(s403=TEACHER, s404=NOT_FOUND,
                                                                        s503=STORE_DOWN))
async def move_step(code: ClassCode, move: StepMove, classes: ClassesDep, token: Token):
    """Teacher only: show step N on every student's screen, its answer hidden again."""
    await classes.require_teacher(code, token)
    await classes.set_step(code, move.step)
    return {}


@router.post("/{code}/reveal", response_model=Done, responses=_responses(s403=TEACHER, s404=NOT_FOUND,
                                                                          s503=STORE_DOWN))
async def reveal(code: ClassCode, classes: ClassesDep, token: Token):
    """Teacher only: show the current step's answer everywhere; answers to it close."""
    await classes.require_teacher(code, token)
    await classes.reveal(code)
    return {}


@router.post("/{code}/lock", response_model=Done, responses=_responses(s403=TEACHER, s404=NOT_FOUND,
                                                                        s503=STORE_DOWN))
async def lock(code: ClassCode, classes: ClassesDep, token: Token):
    """Teacher only: close joining. New students get 403 class_locked; those who joined stay and answer."""
    await classes.require_teacher(code, token)
    await classes.set_locked(code, True)
    return {}


@router.post("/{code}/unlock", response_model=Done, responses=_responses(s403=TEACHER, s404=NOT_FOUND,
                                                                          s503=STORE_DOWN))
async def unlock(code: ClassCode, classes: ClassesDep, token: Token):
    """Teacher only: open joining again."""
    await classes.require_teacher(code, token)
    await classes.set_locked(code, False)
    return {}


@router.post("/{code}/end", response_model=Done, responses=_responses(s403=TEACHER, s404=NOT_FOUND,
                                                                       s503=STORE_DOWN))
async def end(code: ClassCode, classes: ClassesDep, token: Token):
    """Teacher only: close the class and forget its answers; every screen is told."""
    await classes.require_teacher(code, token)
    await classes.end(code)
    return {}


@router.post("/{code}/answers", response_model=Answered, responses=_responses(
    s401="student_token_missing: no Authorization: Bearer <student_token>.",
    s403="student_token_wrong: a token that is not a student's of this class (forged, or another class's).",
    s404=NOT_FOUND,
    s409="step_not_current (ctx: step, current), answers_closed (ctx: step), step_without_question (ctx: step).",
    s429=TOO_MANY_MISSES, s503=STORE_DOWN))
async def answer(request: Request, code: GuardedCode, body: Answer, classes: ClassesDep, token: Token):
    """A student's answer to the current step, one of its choices; a later answer replaces it until the reveal.
    Sending the same answer again is safe at any time (a retry after a lost reply): it is counted once."""
    await _known(request, classes.answer(code, token, body.step, body.choice))
    return {"step": body.step, "choice": body.choice}


@router.get("/{code}/events", responses={**_responses(s404=NOT_FOUND, s429=TOO_MANY_MISSES, s503=STORE_DOWN), 200: {
    "content": {"text/event-stream": {}},
    "description": "Server-sent events: the current state at once, then each change, as data: "
                   '{"step", "revealed", "joined", "answered", "locked"}, or {"ended": true}. While the class '
                   "store does not answer: `event: outage`; when it does again: `event: back` and the state. A "
                   "comment at least every 15 s keeps the line open through proxies."}})
async def events(request: Request, code: GuardedCode, classes: ClassesDep, broadcaster: Events, settings: AppSettings,
                 student: Annotated[StudentId | None, Query(
                     description="Any student's id: the student's view (steps and reveals only). It joins "
                                 "nobody: joining is POST /join. Without it, the teacher's view.")] = None):
    """The class's steps and reveals as they happen. A student who reconnects gets the current step first."""
    state = await _known(request, classes.state(code))
    stream = event_stream(broadcaster, code, state, teacher_view=student is None,
                          keepalive=settings.class_keepalive_seconds)
    # no-transform: no proxy may buffer or compress the stream; X-Accel-Buffering: nginx's own switch.
    return StreamingResponse(stream, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"})


qr_router = APIRouter()


@qr_router.get("/classes/{code}/qr.svg", include_in_schema=False)
async def join_qr(request: Request, code: GuardedCode, classes: ClassesDep):
    """The class's join link as a QR code for the projector: a link phones can open when there is one."""
    await _known(request, classes.state(code))
    join_url, urls, _ = await join_links(request, code)
    return Response(qr_svg(urls[0] if urls else join_url, code), media_type="image/svg+xml",
                    headers={"Cache-Control": "no-store"})
