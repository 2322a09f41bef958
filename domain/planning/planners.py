"""One planner per workload kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.catalog import Gpu
from domain.planning.images import ImageSizing, plan_images
from domain.planning.inference import plan_inference
from domain.planning.inference_sizing import InferenceSizing
from domain.planning.plan import Candidate, Plan
from domain.planning.training import plan_training, size_training

PLANNERS: dict[str, Callable[[Plan, Gpu], Candidate]] = {
    "inference": plan_inference,
    "training": plan_training,
    "fine_tuning": plan_training,
    "image_generation": plan_images,
}
# How each planner sizes a request before it plans the GPUs: once per plan.
SIZERS: dict[str, Callable[[Plan], Any]] = {
    "inference": InferenceSizing,
    "training": size_training,
    "fine_tuning": size_training,
    "image_generation": ImageSizing,
}
