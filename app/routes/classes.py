"""Class mode's API: the teacher leads, the students follow and answer (README "Class mode")."""

from collections.abc import Awaitable
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.responses import StreamingResponse

from app.class_schemas import Answer, ClassCode, ClassView, Done, NewClass, StepMove, StudentId
from app.schemas import ERROR_RESPONSES, ErrorMessage
from app.services.class_events import Broadcaster, event_stream
from app.services.classes import ClassError, Classes
from app.services.lesson import qr_svg

router = APIRouter(prefix="/api/classes", tags=["classes"])
KEEPALIVE_SECONDS = 15.0



async def get_classes(request: Request) -> Classes:
    return request.app.state.classes


async def get_broadcaster(request: Request) -> Broadcaster:
    return request.app.state.class_events


async def teacher_token(authorization: Annotated[str | None, Header(
        description="Bearer <teacher_token> from POST /api/classes. The teacher's actions need it (403 without it "
                    "or with another token); a student sends none.")] = None) -> str | None:
    # An optional header rather than a security scheme: without it the answer is 403 (the class's rule), and a
    # documented scheme would promise a 401.
    scheme, _, token = (authorization or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def guarded(request: Request, code: ClassCode) -> str:
    """The code of a join attempt: refused (429) while this address has guessed too many unknown codes."""
    request.app.state.join_guard.check(_address(request))
    return code


def _address(request: Request) -> str:
    return request.client.host if request.client else "?"


async def _known(request: Request, lookup: Awaitable):
    """lookup's result; a 404 (unknown code) counts against the address."""
    try:
        return await lookup
    except ClassError as error:
        if error.status == 404:
            request.app.state.join_guard.missed(_address(request))
        raise


ClassesDep = Annotated[Classes, Depends(get_classes)]
Token = Annotated[str | None, Depends(teacher_token)]
GuardedCode = Annotated[str, Depends(guarded)]
Events = Annotated[Broadcaster, Depends(get_broadcaster)]
RESPONSES = {**ERROR_RESPONSES,
             403: {"model": ErrorMessage, "description": "Not the teacher's token (or none) for a teacher's action."},
             404: {"model": ErrorMessage, "description": "No class with this code: never opened, ended, or 12 h idle."},
             409: {"model": ErrorMessage, "description": "Against the class's rules: not the current step, revealed, "
                                                         "or the class is full."},
             429: {"model": ErrorMessage, "description": "Too many unknown codes from this address in a minute."}}


@router.post("", response_model=NewClass, status_code=201, responses=RESPONSES)
async def create_class(request: Request, classes: ClassesDep):
    """Open a class at step 1. Keep teacher_token secret: it alone moves, reveals and ends the class."""
    code, token = await classes.create()
    join_url = str(request.url_for("lesson_page").include_query_params(**{"class": code}))
    return {"code": code, "teacher_token": token, "join_url": join_url}


@router.get("/{code}", response_model=ClassView, response_model_exclude_none=True, responses=RESPONSES)
async def get_class(request: Request, code: GuardedCode, classes: ClassesDep, token: Token):
    """The class's step and how many joined and answered; with the teacher's token, also the answers' spread."""
    state = await _known(request, classes.state(code))
    view = {"step": state.step, "revealed": state.revealed, "joined": state.joined, "answered": state.answered}
    if await classes.is_teacher(code, token):
        view["counts"] = await classes.counts(code, state)
    return view


@router.post("/{code}/step", response_model=Done, responses=RESPONSES)
async def move_step(code: ClassCode, move: StepMove, classes: ClassesDep, token: Token):
    """Teacher only: show step N on every student's screen, its answer hidden again."""
    await classes.require_teacher(code, token)
    await classes.set_step(code, move.step)
    return {}


@router.post("/{code}/reveal", response_model=Done, responses=RESPONSES)
async def reveal(code: ClassCode, classes: ClassesDep, token: Token):
    """Teacher only: show the current step's answer everywhere; answers to it close."""
    await classes.require_teacher(code, token)
    await classes.reveal(code)
    return {}


@router.post("/{code}/end", response_model=Done, responses=RESPONSES)
async def end(code: ClassCode, classes: ClassesDep, token: Token):
    """Teacher only: close the class and forget its answers; every screen is told."""
    await classes.require_teacher(code, token)
    await classes.end(code)
    return {}


@router.post("/{code}/answers", response_model=Done, responses=RESPONSES)
async def answer(request: Request, code: GuardedCode, body: Answer, classes: ClassesDep):
    """A student's answer to the current step, one of its choices; a later answer replaces it until the reveal."""
    await _known(request, classes.answer(code, body.student, body.step, body.choice))
    return {}


@router.get("/{code}/events", responses={**RESPONSES, 200: {
    "content": {"text/event-stream": {}},
    "description": "Server-sent events: the current state at once, then each change, as data: "
                   '{"step", "revealed", "joined", "answered"}, or {"ended": true}. Comments keep the line open.'}})
async def events(request: Request, code: GuardedCode, classes: ClassesDep, broadcaster: Events,
                 student: Annotated[StudentId | None, Query(
                     description="The student's id: joins the class. Without it, the teacher's view.")] = None):
    """The class's steps and reveals as they happen. A student who reconnects gets the current step first."""
    if student is not None:
        await _known(request, classes.join(code, student))
    state = await _known(request, classes.state(code))
    stream = event_stream(broadcaster, code, state, teacher_view=student is None, keepalive=KEEPALIVE_SECONDS)
    # no-transform: no proxy may buffer or compress the stream; X-Accel-Buffering: nginx's own switch.
    return StreamingResponse(stream, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"})


qr_router = APIRouter()


@qr_router.get("/classes/{code}/qr.svg", include_in_schema=False)
async def join_qr(request: Request, code: GuardedCode, classes: ClassesDep):
    """The class's join link as a QR code for the projector."""
    await _known(request, classes.state(code))
    url = str(request.url_for("lesson_page").include_query_params(**{"class": code}))
    return Response(qr_svg(url, code), media_type="image/svg+xml", headers={"Cache-Control": "no-store"})
