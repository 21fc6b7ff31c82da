"""One turn of the tutor, as its list of stages (tutor/stages/): open, recall, understand,
find, then select and compose for a question about the material (the evidence sentences,
and checked statements written from them) or write and verify (exercise help, prose; a
hint first reads the next step of the exercise's solution: plan), and record, each from a
frozen input to a frozen output. The pipeline runner (pipeline.py) books the time of each
stage under its name, and a stage that answers the turn itself (a canned reply, "not
covered", the passages alone) skips the rest to the record."""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from functools import partial

from ..config import summaries_by_model
from ..llm.router import Router
from ..types import Answer, DoneEvent, StreamEvent, Turn
from ..workspace import Workspace
from .diagnosis import DiagnoseInput, diagnose_turn
from .evidence import Evidence
from .pipeline import Finished, Pipeline, Reply
from .reuse import AnswerReuse
from .stages.compose import compose
from .stages.find import confirm, covered, find
from .stages.opened import Ask, Opened, open_turn
from .stages.plan import applies as plans
from .stages.plan import plan
from .stages.recall import recall
from .stages.record import record, say
from .stages.select import applies, select_evidence
from .stages.tools import Tools
from .stages.understand import Understood, categorize, rewrite, translate
from .stages.verify import verify
from .stages.write import generate, prepare

__all__ = ["Opened", "Tutor"]


class Tutor:
    """Answers students' questions from one workspace's courses."""

    def __init__(self, workspace: Workspace, router: Router | None = None) -> None:
        self.ws = workspace
        self.settings = workspace.settings
        self.router = router or Router(workspace.settings)

    def ask(self, question: str, course: str, student: str = "anonymous",
            session_id: str | None = None, level: int = 3,
            class_id: str | None = None) -> Answer:
        """Run one turn and return the whole answer."""
        answer: Answer | None = None
        for event in self.stream(question, course, student, session_id, level,
                                 class_id=class_id):
            if isinstance(event, DoneEvent):
                answer = event.answer
        assert answer is not None  # stream always ends with DoneEvent
        return answer

    def stream(self, question: str, course: str, student: str = "anonymous",
               session_id: str | None = None, level: int = 3,
               history: Sequence[Turn] | None = None,
               class_id: str | None = None) -> Iterator[StreamEvent]:
        """Run one turn as events: meta, tokens, sources, and always a final done.

        `history` replaces the stored session's earlier turns (a client that keeps the
        conversation itself, like an OpenAI-style chat client); `class_id` asks during
        that class of the course (tiers.py: its passages first, labelled).
        """
        turn = self.open(question, course, student, session_id, level, history, class_id)
        yield from self.run(turn)

    def open(self, question: str, course: str, student: str = "anonymous",
             session_id: str | None = None, level: int = 3,
             history: Sequence[Turn] | None = None,
             class_id: str | None = None) -> Opened:
        """Check the question, course, session and backend, and start the turn: every error
        a caller can act on is raised here, before any work is queued or streamed."""
        return open_turn(self.ws, self.router, Ask(question, course, student, session_id,
                                                   level, history, class_id))

    @property
    def summarizer(self) -> Router | None:
        """The router that writes summaries; None: they are extracted from the turns."""
        return self.router if summaries_by_model(self.settings) else None

    def run(self, o: Opened) -> Iterator[StreamEvent]:
        """The events of a turn `open` started; once the done event is out, what the
        student's own work showed is diagnosed (mastery, weak areas: diagnosis.py)."""
        run = Pipeline(o.started)
        tools = Tools(self.ws, self.router, run.log, AnswerReuse(self.ws, o, o.state),
                      o.course)
        try:
            reply = yield from self._stages(tools, run, o)
        except Finished as end:
            reply = end.reply
        text = yield from say(tools, reply)
        answer, stored = record(tools, o, reply, text, run)
        answer = tools.reuse.keep(answer, stored)
        yield DoneEvent(answer)
        diagnose_turn(self.ws, self.router, DiagnoseInput(
            o.course, o.student, o.session_id, o.question,
            o.history[-1].answer if o.history else "", f"{o.session_id}:{stored.ordinal}"),
            answer, run.log)

    def _stages(self, t: Tools, run: Pipeline, o: Opened) -> Generator[StreamEvent, None, Reply]:
        """The stages from recall to verify; a stage's `Reply` ends them (`Finished`)."""
        recalled = run.step("memory", partial(recall, t), o)
        understood = run.step("categorize", categorize, recalled)
        if understood.followup:
            understood = run.step("rewrite", partial(rewrite, t), understood)
        if understood.translates:
            understood = run.step("translate", partial(translate, t), understood)
        reused = (run.step("reuse", partial(_reuse, t), understood)
                  if t.reuse.applies(understood.cat) else None)
        found = run.step("retrieve_grade", partial(find, t, reused=reused), understood)
        run.timings["grade"] = round(run.timings["retrieve_grade"] - found.laps["retrieve"], 1)
        if not found.cat.sure and found.evidence.grade != "correct":
            found = run.step("categorize_model" if self.router.enabled else "",
                             partial(confirm, t), found)
        found = run.step("", partial(covered, t), found)
        if applies(t, found):  # the few sentences that answer, and statements from them
            selected = run.step("select", partial(select_evidence, t), found)
            if selected.selection.answers:
                return (yield from run.stream("compose", partial(compose, t), selected))
        prompted = run.step("", partial(prepare, t), found)
        if plans(t, prompted):  # a hint that names the next step of this exercise's solution
            prompted = run.step("plan", partial(plan, t), prompted)
        written = yield from run.stream("generate", partial(generate, t), prompted)
        return (yield from run.stream("", partial(verify, t), written))


def _reuse(tools: Tools, u: Understood) -> Evidence | None:
    """Stage: reuse. An earlier answer's passages for the same question (reuse.py)."""
    return tools.reuse.find(u.cat, u.recalled.opened.allowed_types)


