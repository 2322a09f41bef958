"""What a training step computes per token: the linear layers' FLOPs (fewer for frozen weights) and attention's."""

from __future__ import annotations

from domain.catalog import LlmModel
from domain.performance.memory import matmul_params


def training_flops_per_token(model: LlmModel, sequence_length: int, method: str = "full") -> float:
    """6N plus attention, 12 x layers x d x S per token (N: matmul_params); 4N for frozen weights (adapters)."""
    # A frozen weight's backward computes the activations' gradient (2N) but no weight gradient (the other 2N): LoRA
    # and QLoRA skip a third of the GEMMs (Hu et al. 2021, arXiv:2106.09685, section 4.2: no gradients for most
    # parameters). The adapters' own GEMMs (rank r against d) are r / d of the layer's and left out.
    return (
        linear_flops_per_param(method) * matmul_params(model)
        + 12.0 * model.layers * model.hidden_size * sequence_length
    )


def linear_flops_per_param(method: str) -> int:
    """The linear layers' FLOPs per parameter and token of a step: 6, 4 where the weights are frozen (adapters)."""
    return 4 if method in ("lora", "qlora") else 6


def forward_flops_per_token(model: LlmModel, sequence_length: int) -> float:
    """A training step's forward pass, what recomputation repeats: 2N plus attention's 4 x layers x d x S."""
    return 2.0 * matmul_params(model) + 4.0 * model.layers * model.hidden_size * sequence_length
