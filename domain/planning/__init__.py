"""The planner: layouts, counts, costs and ranks for every workload kind."""

from domain.planning.plan import EstimateRequest, LayoutRequest, RecommendationRequest
from domain.planning.ranking import PreparedRequest, estimate, prepare, rank, recommend, recommendation_id

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
