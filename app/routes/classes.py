"""Class mode's API: the teacher leads, the students join and answer (docs/class-mode.md).

Who is slowed by which limit (app/services/rate_limits.py): a request that holds a credential of the class
(the teacher's or a student's token, or on an event stream a student's id or the teacher's stream key) is never
refused for the unknown codes others sent from its address; only requests without one are."""

import hmac
import time
from collections.abc import Awaitable
from typing import Annotated, Literal

from fastapi import APIRouter, Body, Depends, Header, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from app.deps import AppSettings, ClassesDep, Events, Limits, Registry, static_dir
from app.errors import ClassError
from app.schemas.classes import (
    Admission,
    Admitted,
    Answer,
    Answered,
    ClassCode,
    ClassResults,
    ClassView,
    Done,
    DoorChoice,
    EventsQuery,
    Joined,
    JoinRequest,
    NewClass,
    NewClassRequest,
    Removal,
    Removed,
    Round,
    StepMove,
)
from app.schemas.compare import ERROR_RESPONSES, ErrorMessage
from app.schemas.verdicts import VerdictRequest
from app.services.class_events import event_stream
from app.services.class_results import ANSWER_COLUMNS, RESULT_COLUMNS, answers_csv, class_results, results_csv
from app.services.classes import join_key_of, stream_key, token_hash
from app.services.i18n import LANGS
from app.services.join_links import is_loopback, join_links
from app.services.lesson import qr_svg
from app.services.verdicts import verdict
from app.settings import Settings

router = APIRouter(prefix="/api/classes", tags=["classes"])


async def bearer_token(authorization: Annotated[str | None, Header(
        description="Bearer <teacher_token> (from POST /api/classes) for the teacher's actions; Bearer "
                    "<student_token> (from POST /api/classes/{code}/join) for a student's answers.")] = None
                       ) -> str | None:
    # An optional header rather than a security scheme: the class's rules decide between 401 and 403.
    scheme, _, token = (authorization or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def address(request: Request) -> str:
    """The client's address: behind a proxy, the one uvicorn read from X-Forwarded-For, which it trusts only
    from the addresses in FORWARDED_ALLOW_IPS (docs/class-mode.md, "Behind a proxy")."""
    return request.client.host if request.client else "?"


async def _without_credential(request: Request, limits) -> None:
    """A request that holds no credential of the class: refused (429) while its address has sent too many
    unknown codes."""
    await limits.misses.check(address(request))


async def _known(request: Request, limits, lookup: Awaitable):
    """lookup's result; a 404 (unknown code) counts against the address, checked and counted in one atomic step
    of the store: once the window is full, the 404 is a 429. Counted after a separate check, 300 unknown codes
    sent at once all passed the check and were all answered 404 (issue 37)."""
    try:
        return await lookup
    except ClassError as error:
        if error.status == 404:
            await limits.misses.hit(address(request))
        raise


async def _as_teacher(request: Request, limits, check: Awaitable):
    """check's result: a teacher-only check (require_teacher, record). Its refusal of a token (403
    teacher_token_wrong, or 404 for no class) counts as a miss against the address, and once the address has
    too many, the refusal is a 429 whatever the code: 403 against 404 would otherwise tell a guesser, at any
    speed, which codes are classes. No token is 403 teacher_only before any lookup; the teacher's own token is
    never slowed."""
    try:
        return await check
    except ClassError as error:
        if error.status in (403, 404) and error.type != "teacher_only":
            await limits.misses.hit(address(request))
        raise


async def _may_create(request: Request, settings: Settings, limits, key: str | None) -> None:
    """The server's own machine (loopback) always may; with HP_TEACHER_KEY, its holders; otherwise an address
    may start HP_CLASSES_PER_HOUR classes an hour, so a student cannot fill the teacher's address's quota."""
    if is_loopback(address(request)):
        return
    expected = settings.teacher_key
    if expected is None:
        await limits.creations.hit(address(request))
        return
    if key is None:
        raise ClassError(401, "teacher_key_missing",
                         "this server asks for the teacher key to start a class: send it as X-Teacher-Key")
    if not hmac.compare_digest(key.encode(), expected.get_secret_value().encode()):
        raise ClassError(403, "teacher_key_wrong", "this is not the teacher key of this server")


Token = Annotated[str | None, Depends(bearer_token)]
Lang = Annotated[Literal[tuple(LANGS)], Query(description="The language of the question and choice texts.")]


def _responses(**described: str) -> dict:
    """The error statuses of one route, each described by the error types it may carry (detail[0].type)."""
    return {**ERROR_RESPONSES, **{int(status[1:]): {"model": ErrorMessage, "description": text}
                                  for status, text in described.items()}}


STORE_DOWN = "class_store_unavailable: the class store (SQLite or Redis) does not answer; Retry-After says when " \
             "to try again."
NOT_FOUND = "class_not_found: no class with this code (never opened, ended, or expired)."
TOO_MANY_MISSES = ("too_many_unknown_codes: too many unknown codes from this address in a minute (Retry-After); "
                   "only requests without a credential of the class are refused.")
TEACHER = "teacher_only (no token) or teacher_token_wrong."


@router.post("", response_model=NewClass, status_code=201, responses=_responses(
    s401="teacher_key_missing: HP_TEACHER_KEY is set and no X-Teacher-Key was sent.",
    s403="teacher_key_wrong.",
    s429="too_many_classes_from_address: HP_CLASSES_PER_HOUR classes from this address in the last hour "
         "(Retry-After; ctx: limit, window_minutes, retry_after, retry_minutes). Never from loopback.",
    s503="too_many_classes_open (ctx: max_classes), no_free_code, or " + STORE_DOWN))
async def create_class(request: Request, classes: ClassesDep, settings: AppSettings, limits: Limits,
                       x_teacher_key: Annotated[str | None, Header(
                           description="HP_TEACHER_KEY, when the server sets one; otherwise not needed. The "
                                       "server's own machine (loopback) needs neither.")] = None,
                       body: Annotated[NewClassRequest | None, Body()] = None):
    """Open a class at step 1. Keep teacher_token secret: it alone moves, reveals, locks, removes and ends."""
    await _may_create(request, settings, limits, x_teacher_key)
    code, token = await classes.create()
    join_url, urls, loopback = await join_links(request, code, join_key_of(token_hash(token)))
    return {"code": code, "teacher_token": token, "join_url": join_url, "join_urls": urls,
            "teacher_stream": stream_key(token), "loopback": loopback, "results_days": settings.results_days}


@router.get("/{code}", response_model=ClassView, response_model_exclude_none=True, responses=_responses(
    s403="teacher_token_wrong: a token that is not the teacher's.", s404=NOT_FOUND, s429=TOO_MANY_MISSES,
    s503=STORE_DOWN))
async def get_class(request: Request, code: ClassCode, classes: ClassesDep, limits: Limits, token: Token):
    """The class's step, door, and how many joined and answered; with the teacher's token, also the spread, the
    roster, who waits at the door, the wrong codes sent from the class's network in the last minute, and the joins
    refused for a name the teacher refused (a student's token gets the same view as none)."""
    holder = await classes.credential(code, token)
    if holder is None:
        await _without_credential(request, limits)
    state = await _known(request, limits, classes.state(code))
    if token is not None and holder is None:
        raise ClassError(403, "teacher_token_wrong", "this is not the teacher's token for this class")
    view = {"step": state.step, "round": state.round, "revealed": state.revealed, "joined": state.joined,
            "answered": state.answered, "door": state.door, "locked": state.locked}
    if holder == "teacher":
        view["counts"] = await classes.counts(code, state)
        seats = await classes.roster(code)
        view["students"] = [vars(seat) for seat in seats if not seat.waiting]
        view["waiting"] = [vars(seat) for seat in seats if seat.waiting]
        view["wrong_codes"] = await limits.misses.held(await classes.addresses(code) | {address(request)})
        view["refused_joins"] = state.refused_joins
        view["now"] = time.time()
    return view


@router.post("/{code}/join", response_model=Joined, status_code=201, responses={**_responses(
    s403="class_locked: the teacher closed the door (a student coming back with their token still gets in); "
         "student_removed: this token's student was removed (or refused) by the teacher; refused_name: the teacher "
         "refused or removed a student with this name in this class (case and width aside; ctx: name).",
    s404=NOT_FOUND, s409="class_full (ctx: max_students).",
    s422="name_too_long (ctx: max_length), name_control_character.",
    s429=TOO_MANY_MISSES + " Or too_many_joins_from_address: HP_JOINS_PER_MINUTE new students from this address "
                           "(checked and counted at once, across workers).",
    s503=STORE_DOWN), 200: {"model": Joined, "description": "A student who came back with their own token."},
    202: {"model": Joined, "description": "The door asks: the student waits (waiting: true) until the teacher "
                                          "admits them; coming back with the token while waiting is 202 too."}})
async def join(request: Request, response: Response, code: ClassCode, classes: ClassesDep, limits: Limits,
               token: Token, body: JoinRequest | None = None):
    """Join the class as a new student (201), with a name for the teacher's roster or one the server gives in
    the phone's language; while the door asks, wait for the teacher (202, waiting: true). Or, with Authorization:
    Bearer <student_token>, come back as the same student (200, with their answers; 202 while still waiting). A
    token that is not this class's is ignored: a new student. A removed student's token is refused (403), so the
    page keeps it: that browser cannot join again as someone new; nor can a name the teacher refused or removed in
    this class, whatever the case or width of its letters (403 refused_name; never the address, which a school
    shares). The join link's key (key) is a credential of
    the class: such a join is never held by the wrong codes others sent from its address."""
    body = body or JoinRequest()
    seat = await classes.student(code, token)  # 403 student_removed for a removed student's token
    if seat is not None:
        student, standing = seat
        response.status_code = 202 if standing == "waiting" else 200
        name = next((seat.name for seat in await classes.roster(code) if seat.student == student), "")
        return {"student": student, "student_token": token, "name": name, "waiting": standing == "waiting",
                "answers": await classes.answers_of(code, student)}
    if not await classes.holds_join_key(code, body.key):
        await _without_credential(request, limits)
    await limits.joins.hit(address(request))
    student, token, name, waiting = await _known(request, limits, classes.join(code, body.name, body.lang,
                                                                               address(request)))
    if waiting:
        response.status_code = 202
    return {"student": student, "student_token": token, "name": name, "waiting": waiting, "answers": {}}


@router.post("/{code}/remove", response_model=Removed, responses=_responses(
    s403=TEACHER, s404=NOT_FOUND, s409="removal_not_confirmed: more than one student would be removed and names "
                                       "does not list exactly them (ctx: count, names).", s503=STORE_DOWN))
async def remove(request: Request, code: ClassCode, body: Removal, classes: ClassesDep, token: Token, limits: Limits):
    """Teacher only: remove a student, some students, everyone who joined after a moment, or everyone waiting at
    the door (a refusal). More than one needs their names (names), as the page confirmed them. Their tokens get
    403 student_removed from then on, their answers no longer count in any step, and their phones are told. A
    removal turns an open door to ask: whoever comes next waits for the teacher."""
    await _as_teacher(request, limits, classes.require_teacher(code, token))
    students = [body.student] if body.student is not None else body.students
    return {"removed": await classes.remove(code, students, body.joined_after, body.names)}


@router.post("/{code}/admit", response_model=Admitted, responses=_responses(s403=TEACHER, s404=NOT_FOUND,
                                                                             s503=STORE_DOWN))
async def admit(request: Request, code: ClassCode, body: Admission, classes: ClassesDep, token: Token,
                limits: Limits):
    """Teacher only: let a student waiting at the door in, or everyone waiting ({"all": true}). They answer from
    then on, and their phones are told. To refuse, remove them."""
    await _as_teacher(request, limits, classes.require_teacher(code, token))
    return {"admitted": await classes.admit(code, body.student)}


@router.post("/{code}/door", response_model=Done, responses=_responses(s403=TEACHER, s404=NOT_FOUND,
                                                                        s503=STORE_DOWN))
async def door(request: Request, code: ClassCode, body: DoorChoice, classes: ClassesDep, token: Token,
               limits: Limits):
    """Teacher only: open, ask or closed. Once the teacher chose, the first reveal leaves the door as it is.
    Students waiting stay waiting whatever the door: the teacher admits or refuses them."""
    await _as_teacher(request, limits, classes.require_teacher(code, token))
    await classes.set_door(code, body.door)
    return {}


@router.post("/{code}/step", response_model=Done, responses=_responses(s403=TEACHER, s404=NOT_FOUND,
                                                                        s503=STORE_DOWN))
async def move_step(request: Request, code: ClassCode, move: StepMove, classes: ClassesDep, token: Token,
                    limits: Limits):
    """Teacher only: show step N on every student's screen, its answer hidden again."""
    await _as_teacher(request, limits, classes.require_teacher(code, token))
    await classes.set_step(code, move.step)
    return {}


@router.post("/{code}/reveal", response_model=Done, responses=_responses(s403=TEACHER, s404=NOT_FOUND,
                                                                          s503=STORE_DOWN))
async def reveal(request: Request, code: ClassCode, classes: ClassesDep, registry: Registry, token: Token,
                 limits: Limits, setup: VerdictRequest | None = None):
    """Teacher only: show the current step's answer everywhere; answers to it close. The server decides which
    choices are right, from the setup on the teacher's screen (the same fields as POST /api/lesson/{step}/verdict;
    absent: the step's own), and keeps them with the class's results."""
    await _as_teacher(request, limits, classes.require_teacher(code, token))
    fields = setup.model_dump() if setup else {}

    async def judge(step_id: str) -> list[str]:
        return (await run_in_threadpool(verdict, step_id, fields, registry))["accepted"]
    await classes.reveal(code, judge)
    return {}


@router.post("/{code}/again", response_model=Round, responses=_responses(
    s403=TEACHER, s404=NOT_FOUND, s409="answers_closed (revealed), too_many_rounds (ctx: max_rounds), "
                                       "step_without_question.", s503=STORE_DOWN))
async def again(request: Request, code: ClassCode, classes: ClassesDep, token: Token, limits: Limits):
    """Teacher only: close the current step's first vote and open a second, before the reveal (peer instruction:
    students talk to a neighbour, then vote again). The second round counts only the answers sent in it."""
    await _as_teacher(request, limits, classes.require_teacher(code, token))
    return {"round": await classes.again(code)}


@router.post("/{code}/lock", response_model=Done, responses=_responses(s403=TEACHER, s404=NOT_FOUND,
                                                                        s503=STORE_DOWN))
async def lock(request: Request, code: ClassCode, classes: ClassesDep, token: Token, limits: Limits):
    """Teacher only: close the door (POST /door {"door": "closed"}). New students get 403 class_locked; those
    who joined stay and answer."""
    await _as_teacher(request, limits, classes.require_teacher(code, token))
    await classes.set_door(code, "closed")
    return {}


@router.post("/{code}/unlock", response_model=Done, responses=_responses(s403=TEACHER, s404=NOT_FOUND,
                                                                          s503=STORE_DOWN))
async def unlock(request: Request, code: ClassCode, classes: ClassesDep, token: Token, limits: Limits):
    """Teacher only: open the door (POST /door {"door": "open"})."""
    await _as_teacher(request, limits, classes.require_teacher(code, token))
    await classes.set_door(code, "open")
    return {}


@router.post("/{code}/end", response_model=Done, responses=_responses(s403=TEACHER, s404=NOT_FOUND,
                                                                       s503=STORE_DOWN))
async def end(request: Request, code: ClassCode, classes: ClassesDep, token: Token, limits: Limits):
    """Teacher only: close the class; every screen is told it ended. Its results stay readable with the teacher's
    token for HP_RESULTS_DAYS days (GET /results), or until the teacher deletes them (DELETE)."""
    await _as_teacher(request, limits, classes.require_teacher(code, token))
    await classes.end(code)
    return {}


@router.delete("/{code}", status_code=204, response_class=Response, responses=_responses(
    s403=TEACHER, s404=NOT_FOUND + " Deleted, or kept past HP_RESULTS_DAYS.",
    s409="class_running (ctx: code): the class has not ended; end it first (POST /end).", s503=STORE_DOWN))
async def delete_class(request: Request, code: ClassCode, classes: ClassesDep, token: Token, limits: Limits):
    """Teacher only: delete an ended class's results now, rather than after HP_RESULTS_DAYS days. Its students,
    their names and answers are gone from the server: GET /results answers 404 from then on."""
    await _as_teacher(request, limits, classes.delete(code, token))
    return Response(status_code=204)


@router.get("/{code}/results", response_model=ClassResults, responses=_responses(
    s403=TEACHER, s404=NOT_FOUND + " An ended class's results are kept for HP_RESULTS_DAYS days (7 unless set).",
    s503=STORE_DOWN))
async def results(request: Request, code: ClassCode, classes: ClassesDep, limits: Limits, settings: AppSettings,
                  token: Token, lang: Lang = "en"):
    """Teacher only, while the class runs and for HP_RESULTS_DAYS days after it ends: every step the class voted
    on or the teacher revealed, with each round's counts, the choices the server accepted at the reveal and who
    did not answer; and each student's answer per step and round."""
    record = await _as_teacher(request, limits, classes.record(code, token))
    return class_results(code, record, static_dir(request), lang, settings.results_days)


CSV_SAFETY = ("Headers and yes/no in `lang`. Every cell that starts with =, +, -, @, a tab or a carriage return "
              "starts with a single quote ('), so a spreadsheet shows it as text, never as a formula (OWASP).")


@router.get("/{code}/results.csv", response_class=Response, responses={**_responses(
    s403=TEACHER, s404=NOT_FOUND, s503=STORE_DOWN), 200: {"content": {"text/csv": {}}, "description":
    "UTF-8 with a byte-order mark, one row per step, round and choice, the steps of GET /results: "
    + ", ".join(RESULT_COLUMNS) + ". " + CSV_SAFETY}})
async def results_table(request: Request, code: ClassCode, classes: ClassesDep, limits: Limits,
                        settings: AppSettings, token: Token, lang: Lang = "en"):
    """Teacher only: the same results as a spreadsheet opens them, in any language."""
    record = await _as_teacher(request, limits, classes.record(code, token))
    results = class_results(code, record, static_dir(request), lang, settings.results_days)
    return _csv(results_csv(results, static_dir(request)), f"class-{code}-results.csv")


@router.get("/{code}/answers.csv", response_class=Response, responses={**_responses(
    s403=TEACHER, s404=NOT_FOUND, s503=STORE_DOWN), 200: {"content": {"text/csv": {}}, "description":
    "UTF-8 with a byte-order mark, one row per student, step and round (the answers of GET /results): "
    + ", ".join(ANSWER_COLUMNS) + "; choice empty where the student sent none, answered_at in UTC. "
    + CSV_SAFETY}})
async def answers_table(request: Request, code: ClassCode, classes: ClassesDep, limits: Limits,
                        settings: AppSettings, token: Token, lang: Lang = "en"):
    """Teacher only: each student's answer at each step and round the class voted on, whether the server's verdict
    accepted it, and when it was sent; removed students are left out."""
    record = await _as_teacher(request, limits, classes.record(code, token))
    results = class_results(code, record, static_dir(request), lang, settings.results_days)
    return _csv(answers_csv(results, static_dir(request)), f"class-{code}-answers.csv")


def _csv(table: bytes, filename: str) -> Response:
    return Response(table, media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@router.post("/{code}/answers", response_model=Answered, responses=_responses(
    s401="student_token_missing: no Authorization: Bearer <student_token>.",
    s403="student_token_wrong: a token that is not a student's of this class (forged, or another class's); "
         "student_removed: the teacher removed this student; waiting_for_teacher: the student waits at the door.",
    s404=NOT_FOUND,
    s409="step_not_current (ctx: step, current), answers_closed (ctx: step), step_without_question (ctx: step).",
    s429=TOO_MANY_MISSES, s503=STORE_DOWN))
async def answer(request: Request, code: ClassCode, body: Answer, classes: ClassesDep, limits: Limits,
                 token: Token):
    """A student's answer to the current step, one of its choices; a later answer replaces it until the reveal.
    Sending the same answer again is safe at any time (a retry after a lost reply): it is counted once."""
    if token is not None and await classes.seat(code, token) is None:
        await _without_credential(request, limits)  # a made-up token: 403 or 404 would tell whether the code exists
    await _known(request, limits, classes.answer(code, token, body.step, body.choice))
    return {"step": body.step, "choice": body.choice}


@router.get("/{code}/events", responses={**_responses(s404=NOT_FOUND, s429=TOO_MANY_MISSES, s503=STORE_DOWN), 200: {
    "content": {"text/event-stream": {}},
    "description": "Server-sent events: the current state at once, then each change, as data: "
                   '{"step", "round", "revealed", "joined", "answered", "door", "locked"}; once the class is gone, '
                   '{"ended": true} (the teacher ended it) or {"lost": true} (it vanished without an end: the class '
                   'store was emptied, e.g. a Redis restarted without persistence); to a removed student\'s stream, '
                   '{"removed": true}; to a student waiting at the door, the state with "waiting": true, and the '
                   'state without it once admitted. While the class store does not answer: `event: outage`; when it '
                   'does again: `event: back` and the state. A comment at least every 15 s keeps the line open through '
                   'proxies.'}})
async def events(request: Request, code: ClassCode, classes: ClassesDep, broadcaster: Events, settings: AppSettings,
                 limits: Limits, query: Annotated[EventsQuery, Query()]):
    """The class's steps and reveals as they happen. A student who reconnects gets the current step first.
    With a student's id of the class or the teacher's stream key, never refused for others' unknown codes."""
    student, teacher = query.student, query.teacher
    standing = await classes.member(code, student)
    if standing is None and not await classes.watches(code, teacher):
        await _without_credential(request, limits)
    state = await _known(request, limits, classes.state(code))
    stream = event_stream(broadcaster, code, state, teacher_view=student is None,
                          keepalive=settings.class_keepalive_seconds,
                          student=student if standing is not None else None, standing=standing)
    # no-transform: no proxy may buffer or compress the stream; X-Accel-Buffering: nginx's own switch.
    return StreamingResponse(stream, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"})


qr_router = APIRouter()


@qr_router.get("/classes/{code}/qr.svg", include_in_schema=False)
async def join_qr(request: Request, code: ClassCode, classes: ClassesDep, limits: Limits,
                  teacher: Annotated[str | None, Query(max_length=64)] = None):
    """The class's join link (with its join key) as a QR code for the projector: a link phones can open when there
    is one. An <img> sends no token, so the teacher's page adds its stream key: never refused for others' unknown
    codes."""
    if not await classes.watches(code, teacher):
        await _without_credential(request, limits)
    await _known(request, limits, classes.state(code))
    join_url, urls, _ = await join_links(request, code, await classes.join_key(code))
    return Response(qr_svg(urls[0] if urls else join_url, code), media_type="image/svg+xml",
                    headers={"Cache-Control": "no-store"})
