"""Interactive defaults: an inference request without latency targets is held to its use case's."""

from __future__ import annotations

from domain.catalog import Catalog
from domain.planning import RecommendationRequest, recommend
from domain.workloads.requests import CustomModel, InferenceWorkload
from tests.conftest import NOW, RATE, run_estimate

QWEN_32B = {
    "architectures": ["Qwen2ForCausalLM"],
    "model_type": "qwen2",
    "hidden_size": 5120,
    "intermediate_size": 27648,
    "num_attention_heads": 40,
    "num_hidden_layers": 64,
    "num_key_value_heads": 8,
    "vocab_size": 152064,
    "max_position_embeddings": 32768,
    "torch_dtype": "bfloat16",
}


def _recommend(catalog: Catalog, workload: InferenceWorkload, lang: str = "en") -> object:
    return recommend(catalog, RecommendationRequest(workload=workload), now=NOW, lang=lang, rate=RATE)  # type: ignore[arg-type]


def test_chat_is_the_default_and_no_option_meets_it_above_100_ms_per_token(reference: Catalog) -> None:
    for workload in (
        InferenceWorkload(custom_model=CustomModel(name="qwen2.5-32b", hf_config=QWEN_32B)),
        InferenceWorkload(model="deepseek-r1", concurrency=50),
    ):
        answer = recommend(reference, RecommendationRequest(workload=workload), now=NOW, lang="en", rate=RATE)
        assert answer.workload.use_case == "chat"  # type: ignore[union-attr]
        met = [o for o in answer.options if o.meets_targets]
        assert met, answer.summary
        for option in met:
            assert option.performance is not None and option.performance.tpot_ms is not None
            assert option.performance.tpot_ms.expected <= 100, (option.gpu.id, option.performance.tpot_ms)
            assert option.performance.ttft_ms is not None and option.performance.ttft_ms.expected <= 2000
        assert "TPOT <= 100 ms" in answer.summary
        assumption = next(a for a in answer.options[0].assumptions if a.name == "use_case")
        assert "chat" in assumption.value and "TTFT <= 2,000 ms" in assumption.value


def test_the_planner_searches_a_batch_that_meets_the_chat_targets(reference: Catalog) -> None:
    # Without a load the batch is the largest within the targets, not the largest that fits.
    chat = run_estimate(reference, InferenceWorkload(model="llama-3.1-70b", precision="fp8"), "h100-sxm", 8)
    batch = run_estimate(
        reference, InferenceWorkload(model="llama-3.1-70b", precision="fp8", use_case="batch"), "h100-sxm", 8
    )
    assert chat.meets_targets and chat.performance is not None and batch.performance is not None
    assert chat.performance.tpot_ms is not None and chat.performance.tpot_ms.expected <= 100
    assert batch.performance.concurrency is not None and chat.performance.concurrency is not None
    assert batch.performance.concurrency.expected >= chat.performance.concurrency.expected
    names = [a.name for a in batch.assumptions]
    assert "use_case" in names
    assert "no latency targets" in next(a.value for a in batch.assumptions if a.name == "use_case")


def test_explicit_targets_win_over_the_use_case(reference: Catalog) -> None:
    loose = InferenceWorkload(model="llama-3.1-8b", max_tpot_ms=400, use_case="chat")
    option = run_estimate(reference, loose, "l4", 1)
    value = next(a.value for a in option.assumptions if a.name == "use_case")
    assert "TPOT <= 400 ms" in value and "defaults" not in value


def test_agent_allows_a_longer_first_token(reference: Catalog) -> None:
    option = run_estimate(reference, InferenceWorkload(model="llama-3.1-8b", use_case="agent"), "h100-sxm", 1)
    value = next(a.value for a in option.assumptions if a.name == "use_case")
    assert "TTFT <= 5,000 ms" in value and "TPOT <= 100 ms" in value
