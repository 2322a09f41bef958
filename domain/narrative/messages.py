"""Reasons, warnings and exclusions: one code, one sentence per language, filled from named figures."""

from __future__ import annotations

from domain.narrative.assumption_messages import ASSUMPTION_MESSAGES
from domain.workloads.requests import Lang

# Reasons, warnings and exclusions: one code, one sentence per language, filled from named figures.
MESSAGES: dict[str, dict[Lang, str]] = {
    # reasons
    "fits_one_gpu": {
        "en": "Fits on one {gpu} with no tensor parallelism ({weights_gb:.0f} GB of weights).",
        "zh": "单卡 {gpu} 即可装下，无需张量并行（权重 {weights_gb:.0f} GB）。",
    },
    "tensor_parallel": {
        "en": "Splits the model over {tp} GPUs (tensor parallel): {weights_gb:.0f} GB of weights exceed one GPU.",
        "zh": "模型需张量并行切分到 {tp} 张卡：权重 {weights_gb:.0f} GB 超出单卡显存。",
    },
    "tensor_parallel_latency": {
        "en": "Splits each copy over {tp} GPUs (tensor parallel) although fewer hold it: faster per request and "
        "more room for the KV cache.",
        "zh": "虽然更少的卡也装得下，每个副本仍切分到 {tp} 张卡（张量并行）：单请求更快，KV 缓存空间更大。",
    },
    "pipeline_nodes": {
        "en": "Spans {nodes} nodes: tensor parallel 8 inside each node, pipeline parallel {pp} across them.",
        "zh": "跨 {nodes} 个节点：节点内 8 卡张量并行，节点间 {pp} 级流水线并行。",
    },
    "replicas": {
        "en": "{replicas} copies of the model serve {concurrency} sequences at once.",
        "zh": "{replicas} 个模型副本同时服务 {concurrency} 个序列。",
    },
    "offer": {
        "en": "Priced with {provider} ({pricing}) at {price:usd} per GPU-hour, as of {as_of}.",
        "zh": "按 {provider}（{pricing}）每 GPU 小时 {price:usd} 计价，价格日期 {as_of}。",
    },
    "training_layout": {
        "en": "Trains on {gpus} GPUs: {layout}.",
        "zh": "使用 {gpus} 张卡训练：{layout}。",
    },
    "training_layout_over": {
        "en": "{layout} chosen: {hours:duration} against {other_hours:duration} with {other}, which loses on {cause}.",
        "zh": "选择 {layout}：{hours:duration}；{other} 需要 {other_hours:duration}，输在{cause}。",
    },
    "training_layout_only": {
        "en": "{layout} is the only layout that fits.",
        "zh": "{layout} 是唯一装得下的布局。",
    },
    "cause_tensor": {"en": "tensor-parallel exchange", "zh": "张量并行通信"},
    "cause_recompute": {"en": "activation recomputation", "zh": "激活重计算"},
    "cause_bubble": {"en": "the pipeline bubble", "zh": "流水线气泡"},
    "cause_exchange": {"en": "data-parallel exchange not hidden by compute", "zh": "未被计算掩盖的数据并行通信"},
    "training_count_deadline": {
        "en": "{gpus} GPU(s) chosen: the fewest that finish within the target ({hours:duration}); {fewer} GPUs would "
        "take {fewer_hours:duration}.",
        "zh": "选择 {gpus} 张卡：能在目标时间内完成的最少卡数（{hours:duration}）；"
        "{fewer} 张卡需要 {fewer_hours:duration}。",
    },
    "training_count_largest": {
        "en": "{gpus} GPU(s) chosen: the most the limits allow, still {hours:duration}.",
        "zh": "选择 {gpus} 张卡：限制内允许的最多卡数，仍需 {hours:duration}。",
    },
    "training_count_fewest": {
        "en": "{gpus} GPU(s) chosen: the fewest the run fits on with no deadline asked ({hours:duration}); more GPUs "
        "finish sooner at about the same cost.",
        "zh": "选择 {gpus} 张卡：未设截止时间时能装下的最少卡数（{hours:duration}）；更多卡更快完成，成本大致相同。",
    },
    "fp8_training": {
        "en": "This GPU trains in FP8 too (precision 'fp8'): about {speedup:.1f}x faster, ~{hours:duration}.",
        "zh": "该 GPU 也支持 FP8 训练：约快 {speedup:.1f} 倍，约 {hours:duration}。",
    },
    "training_one_gpu": {
        "en": "Trains on one {gpu}, no sharding needed: {layout}.",
        "zh": "单张 {gpu} 即可训练，无需分片：{layout}。",
    },
    "image_batch": {
        "en": "Runs {batch} images at a time per GPU: the batch shares the per-pass launch cost.",
        "zh": "每张卡一次生成 {batch} 张图：批处理分摊每步的启动开销。",
    },
    "images_per_gpu": {
        "en": "Each GPU runs its own pipeline: about {per_gpu:.0f} images per hour per GPU.",
        "zh": "每张卡独立运行一条管线：每卡每小时约 {per_gpu:.0f} 张图。",
    },
    # warnings
    "no_nvlink_inference": {
        "en": "No NVLink on {gpu}: tensor parallelism runs over PCIe and costs latency; replicas scale better.",
        "zh": "{gpu} 没有 NVLink：张量并行走 PCIe，延迟更高；多副本扩展更好。",
    },
    "no_nvlink_training": {
        "en": "No NVLink on {gpu}: multi-GPU training will be slow (gradients and shards cross PCIe).",
        "zh": "{gpu} 没有 NVLink：多卡训练会很慢（梯度与分片经 PCIe 传输）。",
    },
    "rocm": {
        "en": "ROCm: expect roughly 10-20% less than tuned CUDA paths and time for tuning; MFU in training is lower.",
        "zh": "ROCm：相比调优后的 CUDA 路径约低 10-20%，需要预留调优时间；训练 MFU 更低。",
    },
    "gaudi": {
        "en": "Gaudi: needs manual integration (SynapseAI / Optimum Habana); estimates are spec-sheet based.",
        "zh": "Gaudi：需要手动集成（SynapseAI / Optimum Habana）；估算仅基于规格参数。",
    },
    "cann": {
        "en": "Ascend (CANN): a separate software stack with limited model support; figures are reported ones.",
        "zh": "昇腾（CANN）：独立软件栈，模型支持有限；参数为公开报道值，非官方数据。",
    },
    "infiniband": {
        "en": "Over 100B parameters across nodes: InfiniBand (or equivalent RDMA) is advised between nodes.",
        "zh": "参数超过 1000 亿且跨节点：节点间建议使用 InfiniBand（或同等 RDMA 网络）。",
    },
    "price_age": {
        "en": "The price is {days} days old (as of {as_of}); check it before you commit.",
        "zh": "价格已有 {days} 天（日期 {as_of}），下单前请核实。",
    },
    "spec_sheet": {
        "en": "Estimate is spec-sheet only: no published measurement backs it for {gpu} (low confidence).",
        "zh": "估算仅基于规格参数：{gpu} 没有公开实测数据支撑（置信度低）。",
    },
    "low_confidence_gpu": {
        "en": "{gpu} has no official datasheet; its figures come from secondary sources.",
        "zh": "{gpu} 没有官方规格书，参数来自二手来源。",
    },
    "fp16_for_bf16": {
        "en": "{gpu} has no BF16: it runs the model in FP16.",
        "zh": "{gpu} 不支持 BF16：以 FP16 运行。",
    },
    "weight_only": {
        "en": "{precision} weights are dequantised to 16-bit for compute on {gpu}.",
        "zh": "{gpu} 上 {precision} 权重需反量化为 16 位再计算。",
    },
    "queueing": {
        "en": "Holds {capacity} of the {concurrency} requested sequences at once; the rest wait in the queue.",
        "zh": "同时只能容纳 {concurrency} 个请求序列中的 {capacity} 个，其余排队。",
    },
    "long_run": {
        "en": "The run takes about {days:.0f} days on this configuration.",
        "zh": "该配置下训练约需 {days:.0f} 天。",
    },
    "no_offer_priced": {
        "en": "No rental offer under the constraints: costs are not given.",
        "zh": "在约束条件下没有可租用的报价：不提供成本。",
    },
    "misses": {"en": "Misses the target: {targets}.", "zh": "未达到目标：{targets}。"},
    "needs_at_least": {
        "en": "The smallest configuration that runs it: {gpus} x {gpu}.",
        "zh": "能运行它的最小配置：{gpus} 张 {gpu}。",
    },
    "layout_load": {
        "en": "{layout} chosen: it serves the load for {cost} against {other_cost} with {other}.",
        "zh": "选择 {layout}：满足负载的成本为 {cost}，而 {other} 需要 {other_cost}。",
    },
    "layout_tie_cost": {
        "en": "{layout} chosen: {tokens:,.0f} output tokens/s against {other_tokens:,.0f} with {other}, the same "
        "within the estimates' accuracy, at {cost} per million output tokens against {other_cost}.",
        "zh": "选择 {layout}：每秒输出 {tokens:,.0f} 个 token，{other} 为 {other_tokens:,.0f}，在估算精度内相同；"
        "每百万输出 token 成本 {cost}，而 {other} 为 {other_cost}。",
    },
    "layout_throughput": {
        "en": "{layout} chosen: {tokens:,.0f} output tokens/s on these GPUs against {other_tokens:,.0f} with {other}.",
        "zh": "选择 {layout}：这些 GPU 上每秒输出 {tokens:,.0f} 个 token，而 {other} 为 {other_tokens:,.0f}。",
    },
    "layout_per_dollar": {
        "en": "{layout} chosen: {per_dollar:,.0f} output tokens per dollar against {other_per_dollar:,.0f} "
        "with {other}.",
        "zh": "选择 {layout}：每美元输出 {per_dollar:,.0f} 个 token，而 {other} 为 {other_per_dollar:,.0f}。",
    },
    "layout_targets": {
        "en": "{layout} chosen: {other} misses a target that this layout meets.",
        "zh": "选择 {layout}：{other} 达不到此布局能满足的目标。",
    },
    "layout_only": {
        "en": "{layout} is the only layout that fits.",
        "zh": "{layout} 是唯一装得下的布局。",
    },
    "inside_nvlink_domain": {
        "en": "Each copy's tensor/expert group of {gpus} GPUs sits inside one {domain}-GPU NVLink domain: its "
        "all-reduce and expert all-to-all stay on NVLink.",
        "zh": "每个副本的张量/专家并行组（{gpus} 张卡）位于同一个 {domain} 卡 NVLink 域内："
        "其归约与专家分发通信都走 NVLink。",
    },
    "across_nvlink_domains": {
        "en": "Each copy's tensor/expert group of {gpus} GPUs spans {nodes} NVLink domains of {domain} GPUs: its "
        "all-reduce and expert all-to-all between them cross the inter-node network.",
        "zh": "每个副本的张量/专家并行组（{gpus} 张卡）跨越 {nodes} 个 {domain} 卡 NVLink 域："
        "域之间的归约与专家分发通信需经节点间网络。",
    },
    "expert_parallel": {
        "en": "Routed experts split over {ep} GPUs (expert parallel){dp_text}.",
        "zh": "路由专家切分到 {ep} 张卡（专家并行）{dp_text}。",
    },
    "pipeline_in_node": {
        "en": "Pipeline parallel {pp} x tensor parallel {tp} inside one node: more room for the KV cache per copy.",
        "zh": "节点内 {pp} 级流水线并行 x {tp} 卡张量并行：每个副本的 KV 缓存空间更大。",
    },
    "idle_copies": {
        "en": "{busy} of the {copies} copies are busy at {concurrency} concurrent sequences; the rest stand idle.",
        "zh": "并发 {concurrency} 个序列时，{copies} 个副本中只有 {busy} 个在工作，其余空闲。",
    },
    "thin_headroom": {
        "en": "Only {headroom:.1f}% of the memory is left over: fragmentation or a longer request may not fit.",
        "zh": "显存只剩 {headroom:.1f}%：碎片或更长的请求可能装不下。",
    },
    "beyond_context": {
        "en": "sequence_length {length} exceeds {model}'s context of {context} tokens: context extension (RoPE "
        "scaling) is assumed.",
        "zh": "序列长度 {length} 超过 {model} 的上下文 {context} 个 token：按上下文扩展（位置编码缩放）估算。",
    },
    # For the planner: an infeasible configuration that a lower precision would fit on fewer GPUs.
    "fits_at_precision": {
        "en": "At {precision} it fits on {gpus} x {gpu}.",
        "zh": "若改用 {precision}，{gpus} 张 {gpu} 即可装下。",
    },
    # exclusions
    "engine_vendor": {
        "en": "{engine} does not run on this vendor's GPUs.",
        "zh": "{engine} 不支持该厂商的 GPU。",
    },
    "layout_heads": {
        "en": "Tensor parallel {tp} does not divide the model's {heads} attention heads.",
        "zh": "张量并行 {tp} 不能整除模型的 {heads} 个注意力头。",
    },
    "layout_experts": {
        "en": "Expert parallel {ep} needs a mixture-of-experts model with at least {ep} routed experts.",
        "zh": "专家并行 {ep} 需要至少有 {ep} 个路由专家的混合专家模型。",
    },
    "layout_count": {
        "en": "A copy of this layout takes {layout_gpus} GPUs, which does not divide {gpus}.",
        "zh": "该布局每个副本占 {layout_gpus} 张卡，不能整除 {gpus}。",
    },
    "not_allowed": {"en": "Not in the allowed GPUs.", "zh": "不在允许的 GPU 列表中。"},
    "excluded_by_request": {"en": "Excluded by the request.", "zh": "被请求排除。"},
    "vendor_excluded": {"en": "Vendor {vendor} is not allowed.", "zh": "不允许厂商 {vendor}。"},
    "ecosystem_excluded": {"en": "Software stack {ecosystem} is not allowed.", "zh": "不允许软件栈 {ecosystem}。"},
    "no_fp8": {
        "en": "No FP8 support ({precision} needs Ada, Hopper, Blackwell, CDNA3 or Gaudi 2+): BF16 runs on it, and "
        "for serving so do INT4 weights, which take a quarter of the BF16 memory.",
        "zh": "不支持 FP8（{precision} 需要 Ada、Hopper、Blackwell、CDNA3 或 Gaudi 2 以上）：可改用 BF16；"
        "推理还可用 INT4 权重，显存只需 BF16 的四分之一。",
    },
    "no_precision": {
        "en": "Cannot run {precision}: no tensor cores for it.",
        "zh": "无法运行 {precision}：没有相应的张量核心。",
    },
    "does_not_fit": {
        "en": "Does not fit on {gpus} GPU(s) of this kind: {needed_gb:.0f} GB needed against {usable_gb:.1f} GB "
        "usable.",
        "zh": "{gpus} 张该型号的卡装不下：需要 {needed_gb:.0f} GB，可用 {usable_gb:.1f} GB。",
    },
    "needs_more_gpus": {
        "en": "Needs {gpus} GPUs, more than the {limit} allowed.",
        "zh": "需要 {gpus} 张卡，超过允许的 {limit} 张。",
    },
    "needs_more_nodes": {
        "en": "Needs {nodes} nodes, more than the {limit} allowed.",
        "zh": "需要 {nodes} 个节点，超过允许的 {limit} 个。",
    },
    "misses_latency": {
        "en": "Cannot keep the {what} within {limit:,.0f} ms: its fastest layout ({layout}, {gpus} GPUs per copy) "
        "takes {value:,.0f} ms.",
        "zh": "{what}无法控制在 {limit:,.0f} 毫秒以内：最快的布局（{layout}，每个副本 {gpus} 张卡）需要 "
        "{value:,.0f} 毫秒。",
    },
    "no_offer": {
        "en": "No offer under the constraints{detail}.",
        "zh": "在约束条件下没有报价{detail}。",
    },
    "over_budget": {
        "en": "Over budget: {hourly:usd} per hour against a limit of {limit:usd}.",
        "zh": "超出预算：每小时 {hourly:usd}，上限 {limit:usd}。",
    },
    "below_limit": {
        "en": "Ranked {rank}, below the {limit} options asked for.",
        "zh": "排名第 {rank}，低于请求返回的 {limit} 个选项。",
    },
    # total cost of ownership
    "tco_price_low_confidence": {
        "en": "The purchase price of {system} is a low-confidence figure ({source}); pass purchase_usd if you have "
        "a quote.",
        # The source is a citation in its own language; the assumptions list it.
        "zh": "{system} 的采购价置信度低（来源见假设列表）；如有报价请传入 purchase_usd。",
    },
    "tco_price_accelerators_only": {
        "en": "The {system} price covers the accelerators only, not a full server: host CPUs, memory, chassis and "
        "networking are extra.",
        "zh": "{system} 的价格只含加速卡，不是整机：主机 CPU、内存、机箱和网络另计。",
    },
    "tco_purchase_age": {
        "en": "The purchase price is {days} days old (as of {as_of}); street prices move, check a current quote.",
        "zh": "采购价已有 {days} 天（日期 {as_of}），市场价格会变动，请核实最新报价。",
    },
    "tco_offer_age": {
        "en": "The {provider} {pricing} price is {days} days old (as of {as_of}); check it before you commit.",
        "zh": "{provider} {pricing}价格已有 {days} 天（日期 {as_of}），下单前请核实。",
    },
    "tco_reserved_3y_longer": {
        "en": "A 3-year reservation commits to 3 years; only the {years} year(s) compared are counted.",
        "zh": "3 年预留需承诺 3 年；此处只计入比较的 {years} 年。",
    },
    "tco_shape_fallback": {
        "en": "No {pricing} offer rents {gpu} in instances of {size} GPUs like the {bought} bought: the comparison "
        "rents {instances} x {rented}-GPU instances instead, which do not share the server's GPU-to-GPU links.",
        "zh": "没有以 {size} 卡实例出租 {gpu} 的{pricing}报价（与所购 {bought} 相同规格）：改按 {instances} 个 "
        "{rented} 卡实例比较，这些实例之间没有该服务器的 GPU 互联。",
    },
    "tco_no_offer": {"en": "No {pricing} offer for {gpu}.", "zh": "{gpu} 没有{pricing}报价。"},
    "tco_no_offer_from": {
        "en": "No {pricing} offer for {gpu} from {providers}.",
        "zh": "{providers} 没有 {gpu} 的{pricing}报价。",
    },
}
MESSAGES.update(ASSUMPTION_MESSAGES)
