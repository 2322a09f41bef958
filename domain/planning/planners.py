"""One planner per workload kind."""

from __future__ import annotations

from collections.abc import Callable

from domain.catalog import Gpu
from domain.planning.images import plan_images
from domain.planning.inference import plan_inference
from domain.planning.plan import Candidate, Plan
from domain.planning.training import plan_training

PLANNERS: dict[str, Callable[[Plan, Gpu], Candidate]] = {
    "inference": plan_inference,
    "training": plan_training,
    "fine_tuning": plan_training,
    "image_generation": plan_images,
}
