"""The guided lesson: the page, its QR codes, and the JSON it is drawn from."""

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import HTMLResponse
from starlette.datastructures import QueryParams

from app.deps import Plotly, Registry, compare_path, static_dir, templates, verdict_path
from app.domain.lesson_steps import GAP_STEPS, STEPS
from app.pipeline.responses import JSONBytes, encoded_json
from app.routes.api import ComparisonId
from app.schemas.compare import COMPARISON_RESPONSES, ERROR_RESPONSES, HeadSplit
from app.schemas.lesson import HeadSplitQuery, LessonSteps
from app.schemas.verdicts import CompareWithVerdict, Verdict, VerdictRequest
from app.services.comparison import step_comparison
from app.services.i18n import LANGS, lang_notices, negotiate, texts
from app.services.lesson import lesson_texts, qr_svg
from app.services.link_codec import explorer_link, lang_repeats, lesson_link, one_lang
from app.services.modules import module_graph
from app.services.options import options
from app.services.verdicts import JUDGED_STEPS
from model.experiments import head_split

router = APIRouter()
StepNumber = Annotated[int, Query(ge=1, le=len(STEPS), description="1-based step number.")]
StepId = Annotated[Literal[JUDGED_STEPS], Path(description="The step's id, as in GET /api/lesson.")]
GapStepId = Annotated[Literal[tuple(GAP_STEPS)], Path(description="A same-or-different step's id (order, leak, pair, "
                                                       "posemb, nomask, ex1), as in GET /api/lesson.")]


@router.get("/lesson", response_class=HTMLResponse, include_in_schema=False)
def lesson_page(request: Request, plotly: Plotly, registry: Registry):
    lang = one_lang(request.query_params)
    chosen = negotiate(lang, request.headers.get("accept-language"))
    folder = static_dir(request)
    t, lt = texts(folder, chosen), lesson_texts(folder, chosen)
    # A bad step, language or class code in a hand-typed link opens the page anyway, and says what it did instead.
    link = lesson_link(request.query_params, len(STEPS), {**t, **lt})
    notices = lang_notices(lang, t) + lang_repeats(request.query_params, t, chosen) + link.notices
    choices = options(registry)
    return templates(request).TemplateResponse(request, "lesson.html", {
        "lang": chosen,
        "t": t,
        "lt": lt,
        "notices": notices,
        "langs": [{"code": code, "name": name} for code, name in LANGS.items()],
        "plotly_src": request.url_for("plotly", filename=plotly.filename).path,
        "modules": module_graph(folder, "js/lesson/main.js"),
        "steps": LessonSteps(steps=STEPS).model_dump()["steps"],  # as /api/lesson answers
        "step": link.values["step"],
        "link": link.values,  # what the page opens with (main.js reads it: the page never parses the query)
        "options": choices,
        # The explorer's empty link, which the lesson's "open in the explorer" link is written from (state.js).
        "link_defaults": explorer_link(QueryParams(), choices, registry, t).values,
    }, headers={"Vary": "Accept-Language"})


@router.get("/lesson/qr.svg", include_in_schema=False)
def lesson_qr(request: Request, step: StepNumber, lang: Annotated[Literal[tuple(LANGS)], Query()] = "zh"):
    """The step's link as a QR code, for the board. The link uses the address the teacher's browser used."""
    url = str(request.url_for("lesson_page").include_query_params(step=step, lang=lang))
    title = lesson_texts(static_dir(request), lang)["qr_title"].format(n=step)
    return Response(qr_svg(url, title), media_type="image/svg+xml",
                    headers={"Cache-Control": "public, max-age=3600"})


@router.get("/api/lesson", response_model=LessonSteps, tags=["api"], responses=ERROR_RESPONSES)
def get_lesson():
    """The guided lesson's steps: setup, answer choices and the lesson's printed figures. Texts are in
    /static/i18n/lesson/{lang}.json."""
    return {"steps": STEPS}


@router.post("/api/lesson/{step_id}/verdict", response_model=Verdict, response_class=JSONBytes, tags=["api"],
             responses=ERROR_RESPONSES)
async def post_verdict(step_id: StepId, req: VerdictRequest, request: Request):
    """What the model did at this step, for the setup and lines the student has on screen: the outcome as one
    of the step's choice ids, a reason id, and the figures it was decided on. A gap is rounding when the same
    weights, run again in float64, leave a gap below 1e-9 of the largest |logit|."""
    answer = await verdict_path(request).step(step_id, req)
    return await encoded_json(answer, request.headers)


@router.post("/api/lesson/{step_id}/compare", response_model=CompareWithVerdict, response_class=JSONBytes,
             tags=["api"], responses=ERROR_RESPONSES)
async def post_step_compare(step_id: GapStepId, req: VerdictRequest, request: Request):
    """POST /api/compare on a same-or-different step's setup, changed by the fields given: the same body as
    POST /api/lesson/{step_id}/verdict, from which the server builds the comparison (with `lesson_step`), so a page
    never builds it. Its answer carries the step's verdict (`step_verdict`) whenever float32 decides it, else
    `comparison_id` for GET /api/lesson/{step_id}/verdict/{comparison_id}. What the lesson page sends per keystroke."""
    cache, batcher = compare_path(request)
    answer = await cache.answer_batched("compare", step_comparison(step_id, req), batcher)
    return await encoded_json(answer, request.headers)


@router.get("/api/lesson/{step_id}/verdict/{comparison_id}", response_model=Verdict, response_class=JSONBytes,
            tags=["api"], responses=COMPARISON_RESPONSES)
async def get_verdict(step_id: StepId, comparison_id: ComparisonId, request: Request):
    """POST /api/lesson/{step_id}/verdict's answer on the setup of the comparison with this `comparison_id`, which
    names this step (`lesson_step`) and is the one the step's setup makes: the same answer as on that setup's body.
    404 when this worker keeps no such comparison; 422 when it is another setup's."""
    answer = await verdict_path(request).step_by_id(step_id, comparison_id)
    return await encoded_json(answer, request.headers)


@router.get("/api/head-split", response_model=HeadSplit, tags=["api"], responses=ERROR_RESPONSES)
def get_head_split(query: Annotated[HeadSplitQuery, Query()]):
    """The head split of an n_embd-wide vector into n_head heads on a line of `length` characters, and
    the attention layer's parameters for each head count dividing n_embd (the lesson's experiment 2)."""
    return head_split(n_embd=query.n_embd, n_head=query.n_head, T=query.length)
