"""The planner: layouts, counts, costs and ranks for every workload kind."""

from domain.planning.ranking import PreparedRequest, estimate, prepare, rank, recommend, recommendation_id
from domain.workloads.requests import EstimateRequest, LayoutRequest, RecommendationRequest

__all__ = [
    "EstimateRequest",
    "LayoutRequest",
    "PreparedRequest",
    "RecommendationRequest",
    "estimate",
    "prepare",
    "rank",
    "recommend",
    "recommendation_id",
]
