"""Class mode's request and response shapes (/docs shows every description)."""

import re
import unicodedata
from typing import Annotated, Literal

from fastapi import Path
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from app.domain.class_codes import CODE_ALPHABET, CODE_LENGTH, DOORS, JOIN_KEY_CHARS, STREAM_KEY_CHARS
from app.domain.class_names import ANIMALS
from app.domain.lesson_steps import STEPS

CODE_PATTERN = f"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$"
STUDENT_PATTERN = r"^[A-Za-z0-9_-]{16,64}$"
NAME_CHARS = 24
# The roster's "joined in the last minute": those joins are counted apart and removed together (Removal.joined_after
# is the server's clock minus this), the answer to a flood of joins.
RECENT_SECONDS = 60


def _rule(error_type: str, message: str, check) -> AfterValidator:
    """A constraint whose message says what to send; the pattern stays in the schema for /docs and clients."""
    def validate(value):
        if not check(value):
            raise PydanticCustomError(error_type, message)
        return value
    return AfterValidator(validate)


ClassCode = Annotated[str, Path(
    json_schema_extra={"pattern": CODE_PATTERN},
    description=f"The class code: {CODE_LENGTH} characters from {CODE_ALPHABET} (no 0, O, 1, I or L).",
), _rule("class_code", f"code must be {CODE_LENGTH} characters from {CODE_ALPHABET}, as on the teacher's board",
         lambda v: re.fullmatch(CODE_PATTERN, v))]
StepNumber = Annotated[int, Field(
    json_schema_extra={"minimum": 1, "maximum": len(STEPS)},
    description=f"1-based step of the guided lesson, 1 to {len(STEPS)} (as /lesson?step=N).",
), _rule("step_range", f"step must be 1 to {len(STEPS)}, the lesson's steps", lambda v: 1 <= v <= len(STEPS))]
# Made by each student's browser (random, e.g. 16 bytes in base64url): no account, no name.
StudentId = Annotated[str, Field(
    json_schema_extra={"pattern": STUDENT_PATTERN},
    description="The student's browser's random id: 16 to 64 characters from A-Z a-z 0-9 _ -.",
), _rule("student_id", "student must be 16 to 64 characters from A-Z a-z 0-9 _ - (the browser's random id)",
         lambda v: re.fullmatch(STUDENT_PATTERN, v))]


def _name(value: str) -> str | None:
    """Trimmed; blank is no name (the server gives one). Control and format characters (Cc, Cf: a newline,
    a right-to-left override) could garble the projector's roster, so they are refused."""
    value = value.strip()
    if any(unicodedata.category(c) in ("Cc", "Cf") for c in value):
        raise PydanticCustomError("name_control_character",
                                  "name must not contain control characters (newlines, tabs, direction marks)")
    if len(value) > NAME_CHARS:
        raise PydanticCustomError("name_too_long", f"name must be at most {NAME_CHARS} characters once trimmed "
                                                   "(got {length})", {"max_length": NAME_CHARS, "length": len(value)})
    return value or None


StudentName = Annotated[str, AfterValidator(_name)]


class ClassRules(BaseModel):
    """What the class pages check and count as the server does (GET /api/options `classes`)."""
    code_alphabet: str = Field(description="The characters of a class code (no 0, O, 1, I or L).")
    code_length: int = Field(description="How many characters a class code has.")
    name_chars: int = Field(description="Longest student name, in characters once trimmed.")
    recent_seconds: int = Field(description="The roster's recent joins: those of the last this many seconds, counted "
                                            "apart and removed together (POST .../remove joined_after).")


CLASS_RULES = ClassRules(code_alphabet=CODE_ALPHABET, code_length=CODE_LENGTH, name_chars=NAME_CHARS,
                         recent_seconds=RECENT_SECONDS)


DoorState = Literal[DOORS]
DOOR_TEXT = ("open: new students come in; ask: they wait at the door until the teacher admits them (POST /admit); "
             "closed: they are refused (403 class_locked)")


class NewClassRequest(BaseModel):
    """POST /api/classes takes no field: its body is absent or {}, and any field is refused by name."""
    model_config = ConfigDict(extra="forbid", strict=True)


class JoinRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={
        "examples": [{"name": "Mei", "lang": "ja", "key": "0123456789abcdef01234567"}]})
    name: StudentName | None = Field(
        None, description=f"What the teacher's roster shows: at most {NAME_CHARS} characters, trimmed, no control "
                          "characters. Absent or blank: the server gives a name unique in the class, e.g. Otter 3.")
    lang: Literal[tuple(ANIMALS)] = Field("en", description="The phone's language: a name the server gives is in it "
                                                            "(e.g. カワウソ 3 in ja).")
    key: str | None = Field(None, max_length=64, description=f"The class's join key ({JOIN_KEY_CHARS} hex "
                                                             "characters), which the join link and its QR code "
                                                             "carry (?key=): a join that holds it is never held by "
                                                             "the wrong codes others sent from its address.")


class Removal(BaseModel):
    """One of: a student, some students, everyone who joined after a moment (the answer to a flood of joins), or
    everyone waiting at the door (a refusal of all). Removing more than one needs their names, as the teacher's
    page listed them when it asked to confirm."""
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"student": "Xq3v8sPz0cL1mN2b"}, {"joined_after": 1767225600.0, "names": ["Tom 2", "ゆき 2"]},
                     {"waiting": True, "names": ["Otter 7", "Otter 8"]}]})
    student: StudentId | None = Field(None, description="One student's id, as the roster or waiting lists it.")
    students: list[StudentId] | None = Field(None, min_length=1, max_length=1000,
                                             description="Several students' ids (needs names).")
    joined_after: float | None = Field(
        None, allow_inf_nan=False,
        description="Seconds since 1970 (as joined_at and now in GET /api/classes/{code}): everyone who joined "
                    "later is removed, waiting or not.")
    waiting: Literal[True] | None = Field(None, description="true: refuse everyone waiting at the door.")
    names: list[str] | None = Field(None, max_length=1000, description=(
        "The names of the students removed, as the teacher confirmed them: needed when more than one is removed. "
        "If they are not exactly the students chosen (one joined meanwhile), nobody is removed: 409 "
        "removal_not_confirmed, whose ctx.names lists the students chosen now."))

    @model_validator(mode="after")
    def one_of_them(self):
        given = [self.student, self.students, self.joined_after, self.waiting]
        if sum(value is not None for value in given) != 1:
            raise PydanticCustomError("removal_one_of", "send one of student (one id), students (ids), joined_after "
                                                        "(seconds) or waiting (true), not several and not none")
        return self


class Admission(BaseModel):
    """One of the two: a student waiting at the door, or everyone waiting."""
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"student": "Xq3v8sPz0cL1mN2b"}, {"all": True}]})
    student: StudentId | None = Field(None, description="One waiting student's id, as the waiting list gives it.")
    all: Literal[True] | None = Field(None, description="true: admit everyone waiting.")

    @model_validator(mode="after")
    def one_of_the_two(self):
        if (self.student is None) == (self.all is None):
            raise PydanticCustomError("admission_one_of", "send either student (one id) or all (true), not both and "
                                                          "not neither")
        return self


class Admitted(BaseModel):
    admitted: list[str] = Field(description="The students admitted now, in joining order (they answer from now on).")


class DoorChoice(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"examples": [{"door": "ask"}]})
    door: DoorState = Field(description=DOOR_TEXT + ".")


class Removed(BaseModel):
    removed: list[str] = Field(description="The students removed now (one already removed is not listed again).")


class SeatView(BaseModel):
    student: str = Field(description="The student's id, as remove takes it.")
    name: str = Field(description="The name they gave, or the one the server gave them.")
    joined_at: float = Field(description="When they joined, in seconds since 1970 (server time).")
    answered: bool = Field(description="Whether they answered the current step.")


class WaitingSeat(BaseModel):
    student: str = Field(description="The student's id, as admit and remove take it.")
    name: str = Field(description="The name they gave, or the one the server gave them.")
    joined_at: float = Field(description="When they came to the door, in seconds since 1970 (server time).")


class NewClass(BaseModel):
    code: str = Field(description="What students type to join.")
    teacher_token: str = Field(description="Secret: send it as Authorization: Bearer <token> to lead the class. "
                                           "The server keeps only its hash, so it cannot be shown again.")
    join_url: str = Field(description="The lesson page in this class, at the address the teacher's page used: "
                                      "/lesson?class=CODE&key=JOIN_KEY (the join key: a phone that opens the link "
                                      "is never held by wrong codes others sent from its address).")
    join_urls: list[str] = Field(description="Join links a phone can open: join_url itself, or, when the page is on "
                                             "a loopback address of this machine, the link on each of its other "
                                             "addresses where this server answers. Empty: no phone can reach it.")
    teacher_stream: str = Field(description=f"The teacher's key to the event stream ({STREAM_KEY_CHARS} hex "
                                            "characters): GET /api/classes/{code}/events?teacher=KEY is never "
                                            "slowed by the unknown-code limit. It grants nothing else.")
    loopback: bool = Field(description="The teacher's page is on a loopback address (127.0.0.1, localhost). With "
                                       "join_urls empty, say that phones cannot reach it: start the server with "
                                       "--host 0.0.0.0 and open it at the machine's network address.")
    results_days: float = Field(description="Days the class's results stay readable once it ends (HP_RESULTS_DAYS), "
                                            "unless the teacher deletes them sooner (DELETE /api/classes/{code}).")


class ClassView(BaseModel):
    step: int = Field(description="The step the teacher shows (1-based).")
    round: int = Field(description="The vote open at this step: 1, or 2 once the teacher asked the class to vote "
                                   "again (POST /again); answered and counts are this round's.")
    revealed: bool = Field(description="Whether the teacher revealed the step's answer.")
    joined: int = Field(description="Students who have joined (each holds a student token).")
    answered: int = Field(description="Students who answered the current step.")
    door: DoorState = Field(description=DOOR_TEXT + ". Open from the start; the first reveal turns an open door to "
                                        "ask, unless the teacher chose the door before; a removal does too.")
    locked: bool = Field(description="Whether the door is closed: a new student gets 403 class_locked.")
    counts: dict[str, int] | None = Field(
        None, description="Teacher only: students per choice at the current step; empty where it asks no question.")
    students: list[SeatView] | None = Field(
        None, description="Teacher only: the roster, by joining time; removed and waiting students are not on it.")
    waiting: list[WaitingSeat] | None = Field(
        None, description="Teacher only: the students waiting at the door, by joining time.")
    wrong_codes: int | None = Field(
        None, description="Teacher only: wrong class codes sent in the last minute from this class's network (the "
                          "addresses its students joined from, and the teacher's): past HP_JOIN_MISSES_PER_MINUTE "
                          "from one address, new joins from it without the join link wait a minute.")
    refused_joins: int | None = Field(
        None, description="Teacher only: joins refused in this class because their name is one the teacher refused "
                          "or removed (403 refused_name; names compared without case or width).")
    now: float | None = Field(None, description="Teacher only: the server's clock (seconds since 1970), to read "
                                                "joined_at against, e.g. the joins of the last minute.")


class Round(BaseModel):
    round: int = Field(description="The round now open at the class's step (2 after the first vote).")


class Joined(BaseModel):
    student: str = Field(description="The student's id in this class, made by the server.")
    student_token: str = Field(description="Secret: send it as Authorization: Bearer <token> with each answer, and "
                                           "with a later join to come back as the same student. The server keeps "
                                           "only its hash.")
    name: str = Field(description="The name the teacher's roster shows: the one sent, or one the server gave.")
    answers: dict[int, str] = Field(description="This student's answers so far, by step: what a student who comes "
                                                "back sees as their own.")
    waiting: bool = Field(False, description="true (status 202): the door asks, and this student waits until the "
                                             "teacher admits them; their answers get 403 waiting_for_teacher until "
                                             "then. Their event stream says so, and sends the state once admitted.")


class StepMove(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"examples": [{"step": 2}]})
    step: StepNumber


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={
        "examples": [{"step": 1, "choice": "same"}]})
    step: StepNumber
    # Checked against the step's own choices by the service, whose message lists them.
    choice: str = Field(description="One of the step's choice ids (GET /api/lesson lists them), e.g. same.")


class Answered(BaseModel):
    ok: bool = Field(True, description="Always true: the answer is kept (a repeat of a kept answer is kept once).")
    step: int = Field(description="The step answered.")
    choice: str = Field(description="The answer kept.")


class Done(BaseModel):
    ok: bool = Field(True, description="Always true: the change is made and every screen of the class is told.")


class ChoiceResult(BaseModel):
    id: str = Field(description="The choice's id, as answers send it.")
    text: str = Field(description="The choice as the lesson words it in the asked language.")
    right: bool | None = Field(description="Whether the server's verdict at the reveal accepted it; null: the step "
                                           "was not revealed.")


class SeatName(BaseModel):
    student: str = Field(description="The student's id.")
    name: str = Field(description="Their name on the roster.")


class RoundResult(BaseModel):
    round: int = Field(description="1, or 2 for the vote after talking to a neighbour.")
    counts: dict[str, int] = Field(description="Students per choice in this round (each round counts its own "
                                               "answers).")
    answered: int = Field(description="Students who answered in this round.")
    right: int | None = Field(description="Of them, those whose choice the verdict accepted; null before the reveal.")
    not_answered: list[SeatName] = Field(description="The class's students who sent no answer in this round.")


class StepResult(BaseModel):
    step: int = Field(description="The step (1-based).")
    id: str = Field(description="The step's id (GET /api/lesson).")
    question: str = Field(description="The question in the asked language.")
    choices: list[ChoiceResult] = Field(description="The step's choices, in the lesson's order.")
    accepted: list[str] | None = Field(description="The choices the server's verdict accepted at the reveal, for the "
                                                   "setup the teacher revealed; null: not revealed.")
    rounds: list[RoundResult] = Field(description="Each round opened at the step: one, or two after a vote again.")


class AnswerRow(BaseModel):
    student: str = Field(description="The student's id.")
    name: str = Field(description="Their name on the roster.")
    step: int = Field(description="The step (1-based).")
    round: int = Field(description="1, or 2 for the vote after talking to a neighbour.")
    choice: str | None = Field(description="The choice they sent (their last in this round); null: none.")
    right: bool | None = Field(description="Whether the verdict accepted it; null before the reveal or without a "
                                           "choice.")
    answered_at: float | None = Field(description="When the choice was sent, seconds since 1970; null without one.")


class ClassResults(BaseModel):
    code: str = Field(description="The class's code.")
    lang: str = Field(description="The language of question and choice texts.")
    ended: bool = Field(description="Whether the teacher ended the class (its record is kept for HP_RESULTS_DAYS "
                                    "days).")
    ended_at: float | None = Field(description="When it ended, seconds since 1970; null while it runs.")
    kept_until: float | None = Field(description="When the server deletes these results (seconds since 1970), "
                                                 "unless the teacher deletes them sooner; null while it runs.")
    students: int = Field(description="Students in the class (removed ones are in no count).")
    steps: list[StepResult] = Field(description="Every step the class voted on or the teacher revealed, in order "
                                                "(a step passed without either is left out).")
    answers: list[AnswerRow] = Field(description="One row per student, step (of `steps`) and round, by student in "
                                                 "joining order: what answers.csv lists.")


class EventsQuery(BaseModel):
    """GET /api/classes/{code}/events' query: a student's id or the teacher's stream key; nothing else, as every
    route's query (a misspelt parameter is named, not ignored)."""
    model_config = ConfigDict(extra="forbid")

    student: StudentId | None = Field(
        None, description="The student's id (from join): the student's view (steps and reveals only), told when the "
                          "teacher removes them. Without it, the teacher's view.")
    teacher: str | None = Field(
        None, max_length=64, description="The teacher's stream key (teacher_stream from POST /api/classes).")
