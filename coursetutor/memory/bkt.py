"""Bayesian Knowledge Tracing: the probability that a student knows a topic, updated by each
right or wrong answer (Corbett & Anderson, 1995, "Knowledge tracing: Modeling the acquisition
of procedural knowledge", User Modeling and User-Adapted Interaction 4(4)).

The update is the few lines of the standard model (as in pyBKT's forward pass, without
forgetting); fitting the four parameters needs many students' answer sequences, which a
course starts without, so they are settings with a course's own values in the store.

Defaults (chosen, not fitted): slip 0.1 and guess 0.2 are at or under the bounds that BKT
fits on tutor data are usually held to, so that the model stays identifiable (guess <= 0.3,
slip <= 0.1; Baker, Corbett & Aleven 2008, "More accurate student modeling through contextual
estimation of slip and guess probabilities", ITS 2008). Prior p(L0) = 0.3 and learn p(T) =
0.1 are moderate starting values: a student new to a topic probably does not know it yet, and
one practice opportunity in ten teaches it. With them three right answers in a row reach
mastery (0.95, the Cognitive Tutors' criterion) and one wrong answer takes an estimate of 0.5
down to 0.2.
"""

from __future__ import annotations

from ..config import Settings
from ..store import Store
from ..store.mastery import MASTERED, BKTParams

__all__ = ["MASTERED", "BKTParams", "course_params", "posterior", "predict_correct",
           "settings_params", "update"]


def posterior(known: float, correct: bool, p: BKTParams) -> float:
    """p(L | answer): Bayes' rule with slip and guess as the emission probabilities."""
    if correct:
        right = known * (1 - p.slip)
        return right / (right + (1 - known) * p.guess)
    wrong = known * p.slip
    return wrong / (wrong + (1 - known) * (1 - p.guess))


def update(known: float | None, correct: bool, p: BKTParams) -> float:
    """p(L_next): the posterior, then the chance to learn from this opportunity.
    `known` None is a first answer, from the prior."""
    after = posterior(p.prior if known is None else known, correct, p)
    return after + (1 - after) * p.learn


def predict_correct(known: float, p: BKTParams) -> float:
    """p(next answer right) = p(L)(1 - slip) + (1 - p(L)) guess."""
    return known * (1 - p.slip) + (1 - known) * p.guess


def settings_params(settings: Settings) -> BKTParams:
    """The parameters the settings give (bkt_prior, bkt_learn, bkt_slip, bkt_guess)."""
    return BKTParams(settings.bkt_prior, settings.bkt_learn, settings.bkt_slip,
                     settings.bkt_guess)


def course_params(store: Store, settings: Settings, tenant: str, course: str) -> BKTParams:
    """The course's own parameters if a teacher set them, else the settings'."""
    return store.mastery.params(tenant, course) or settings_params(settings)
