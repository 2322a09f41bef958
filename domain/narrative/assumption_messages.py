"""Assumption values: one code, one text per language, filled from named figures (identifiers stay as written)."""

from __future__ import annotations

from domain.workloads.requests import Lang

ASSUMPTION_MESSAGES: dict[str, dict[Lang, str]] = {
    "a_weights": {
        "en": "{precision}, {bytes:g} bytes per parameter incl. quantization scales",
        "zh": "{precision}，每个参数 {bytes:g} 字节（含量化缩放因子）",
    },
    "a_kv_cache": {
        "en": "{precision}, {bytes:,.0f} bytes per token",
        "zh": "{precision}，每 token {bytes:,.0f} 字节",
    },
    "a_sequence": {
        "en": "{input} input + {output} output tokens, mean decode context input + output/2",
        "zh": "输入 {input} + 输出 {output} 个 token，解码时平均上下文为输入 + 输出/2",
    },
    "a_output_lengths": {
        "en": "output lengths heavy-tailed (log-normal, sigma {sigma:.2f}): median {median:,.0f} tokens for the mean "
        "of {mean:,}; throughput assumes waiting requests keep the batch full; an offline job ends as its last batch "
        "drains: {requests:,} requests at {slots} sequences per copy keep {share:.0%} of that throughput",
        "zh": "输出长度为重尾分布（对数正态，σ = {sigma:.2f}）：均值 {mean:,} 时中位数 {median:,.0f} 个 "
        "token；吞吐量假定等待中的请求让批次保持满载；离线任务在最后一批排空时结束："
        "每个副本 {slots} 个序列处理 {requests:,} 个请求时，保留该吞吐量的 {share:.0%}",
    },
    "a_low_precision": {
        "en": "{precision} speeds up the linear layers' GEMMs only, {share:.0%} of a 16-bit step (attention, norms, "
        "casts and exchanges keep their time): {speedup:.2f}x the 16-bit run",
        "zh": "{precision} 只加速线性层的矩阵乘法，占 16 位训练步的 {share:.0%}"
        "（注意力、归一化、类型转换与通信耗时不变）：为 16 位训练的 {speedup:.2f} 倍",
    },
    "a_engine": {
        "en": "{engine}: up to {large} sequences per copy on GPUs of 70 GiB or more ({small} below), KV cache {kv}, "
        "decode efficiency x{speedup:g} of vLLM's",
        "zh": "{engine}：显存 70 GiB 及以上的 GPU 每个副本最多 {large} 个序列（以下为 {small} 个），KV 缓存 {kv}，"
        "解码效率为 vLLM 的 x{speedup:g}",
    },
    "a_latency_definitions": {
        "en": "tpot_ms: mean time between a request's output tokens under continuous batching with chunked prefill "
        "(decode steps plus the share of steps that carry other requests' prefills); ttft_ms: prefill sharing the "
        "GPUs with decoding, one decode step and the wait behind other prefills (M/D/1)",
        "zh": "tpot_ms：连续批处理与分块预填充下，一个请求相邻输出 token 的平均间隔（解码步，加上携带其他请求预填充的"
        "步所占份额）；ttft_ms：与解码共享 GPU 的预填充、一个解码步，以及排在其他预填充之后的等待（M/D/1 排队）",
    },
    "a_memory": {
        "en": "{share:g} of {gib:.1f} GiB usable per GPU (datasheet GB of HBM are GiB; results are in GB of 1e9 bytes)",
        "zh": "每张 GPU 可用 {gib:.1f} GiB 中的 {share:g}（规格书中 HBM 的 GB 实为 GiB；结果以 1e9 字节的 GB 计）",
    },
    "a_batch": {
        "en": "{batch} sequences per model copy (at most {capacity} fit or are allowed)",
        "zh": "每个模型副本 {batch} 个序列（最多可容纳或允许 {capacity} 个）",
    },
    "a_tensor_parallel": {
        "en": "{gpus} GPUs over {link}: all-reduce latency {alpha} us between two GPUs; per doubling of the group the "
        "per-layer floor grows x(1+{growth:g}) and the bandwidth shards reach x{decay:g}",
        "zh": "{gpus} 张 GPU 经 {link} 互联：两卡间全归约延迟 {alpha} 微秒；并行组每扩大一倍，每层单步下限增长 "
        "x(1+{growth:g})，各分片的带宽利用降至 x{decay:g}",
    },
    "a_compute": {
        "en": "{linear}ND + attention = {flops:.3g} FLOP per token (N less the input embedding, a lookup){recompute}",
        "zh": "{linear}ND + 注意力 = 每 token {flops:.3g} FLOP（参数量不含输入嵌入：查表不做乘法）{recompute}",
    },
    "a_recompute": {"en": ", x{factor:.2f} for recomputed layers", "zh": "，重计算层 x{factor:.2f}"},
    "a_sharding_data": {"en": "{zero} over {data} data-parallel ranks", "zh": "{zero}，{data} 个数据并行副本"},
    "a_replicated": {"en": "replicated", "zh": "完整复制"},
    "a_offloaded": {"en": ", optimizer states offloaded to host memory", "zh": "，优化器状态卸载到主机内存"},
    "a_one_copy": {"en": "one model copy, no data-parallel sharding", "zh": "单个模型副本，无数据并行切分"},
    "a_one_gpu": {"en": "one GPU, no sharding", "zh": "单卡，无切分"},
    "a_layout": {
        "en": "{sharding}; tensor {tp} x pipeline {pp} x data {dp}; micro-batch {micro} x {sequence} tokens, global "
        "batch {global_batch} sequences",
        "zh": "{sharding}；张量并行 {tp} x 流水线并行 {pp} x 数据并行 {dp}；微批次 {micro} x {sequence} 个 token，"
        "全局批次 {global_batch} 个序列",
    },
    "a_bubble": {
        "en": ", pipeline bubble {bubble:.1f}% (interleaved 1F1B)",
        "zh": "，流水线气泡 {bubble:.1f}%（交错 1F1B 调度）",
    },
    "a_adapters": {
        "en": "LoRA branches on {targets}{dropout}: {mb:.3g} MB per token through each tensor-parallel rank, moved at "
        "{gbps:.0f} GB/s beside the frozen GEMMs",
        "zh": "LoRA 分支位于{targets}{dropout}：每个 token 在每个张量并行分片上读写 {mb:.3g} MB，以 {gbps:.0f} GB/s "
        "的显存带宽完成，与冻结权重的矩阵乘法串行",
    },
    "a_adapters_qkv": {"en": "the fused qkv projection", "zh": "融合的查询、键、值投影"},
    "a_adapters_all": {"en": "every linear layer", "zh": "所有线性层"},
    "a_adapters_dropout": {"en": " behind a dropout", "zh": "（输入先经随机失活）"},
    "a_paged": {"en": ", paged optimizer states in CPU memory", "zh": "，分页优化器状态放在 CPU 内存"},
    "a_optimizer": {
        "en": "{optimizer}: {bytes} bytes per trainable parameter",
        "zh": "{optimizer}：每个可训练参数 {bytes} 字节",
    },
    "a_inter_node": {"en": "{gbps} GB/s per GPU", "zh": "每张 GPU {gbps} GB/s"},
    "a_image_tflop": {
        "en": "{tflop:.0f} TFLOP per image ({steps} steps x {passes} passes, {width}x{height}, VAE decode)",
        "zh": "每张图 {tflop:.0f} TFLOP（{steps} 步 x 每步 {passes} 次前向，{width}x{height}，含 VAE 解码）",
    },
    "a_image_batch": {
        "en": "{batch} image(s) at a time per GPU: the smallest batch within 3% of the best throughput that fits "
        "(a batch shares the per-pass launch floor; compute-bound sizes gain nothing from it)",
        "zh": "每张 GPU 一次生成 {batch} 张：装得下且吞吐与最佳相差 3% 以内的最小批大小（同批共享每次前向的启动开销；"
        "算力受限的尺寸从更大批次中得不到收益）",
    },
    "a_tco_basis": {
        "en": "owning amortised over {years} years at 100% utilization with POST /v1/tco's defaults (PUE {pue:g}, "
        "{electricity:g} USD/kWh, resale {resale:g}, cost of capital {capital:g}, operations {operations:,.0f} "
        "USD/year)",
        "zh": "自购成本按 {years} 年摊销、利用率 100%，采用 POST /v1/tco 的默认值（PUE {pue:g}，电价 {electricity:g} "
        "USD/kWh，残值比例 {resale:g}，资金成本 {capital:g}，运维 {operations:,.0f} USD/年）",
    },
    "t_years": {"en": "{years} years", "zh": "{years} 年"},
    "t_resale": {"en": "{share:g} of the purchase", "zh": "购置价的 {share:g}"},
    "t_capital": {"en": "{rate:g} a year", "zh": "每年 {rate:g}"},
    "t_all": {"en": "all", "zh": "全部"},
    "t_power": {
        "en": "{full:.3f} kW at full load, {average:.3f} kW on average at {utilization:.0%} utilization",
        "zh": "满载 {full:.3f} kW，利用率 {utilization:.0%} 时平均 {average:.3f} kW",
    },
    "t_idle": {
        "en": "an idle server draws {idle:g} of full power: draw = full x ({idle:g} + {busy:g} x utilization)",
        "zh": "空闲服务器耗电为满载的 {idle:g}：功耗 = 满载 x（{idle:g} + {busy:g} x 利用率）",
    },
    "t_energy": {
        "en": "{hours:g} hours a year; power = IT energy, facility = (PUE - 1) x IT energy",
        "zh": "每年 {hours:g} 小时；电费 = 计算设备能耗，机房 = (PUE - 1) x 计算设备能耗",
    },
    "t_financing": {
        "en": "cost_of_capital x book value at the start of each year; book value falls linearly from the purchase "
        "price to the resale value",
        "zh": "资金成本 = 年利率 x 每年年初的账面价值；账面价值从购置价线性降到残值",
    },
    "t_billing": {
        "en": "on demand, spot and capacity blocks bill the hours used (gpu_count x utilization x 8760 a year); "
        "reservations bill every hour",
        "zh": "按需、竞价和容量块按使用时长计费（GPU 数量 x 利用率 x 每年 8760 小时）；预留按全部时长计费",
    },
    "t_offer": {
        "en": "like for like: the cheapest offer of each pricing model for this GPU in instances of {shape} GPUs (or a "
        "multiple), as the {bought} bought; a smaller instance size only where no offer of that size exists (a "
        "warning says so)",
        "zh": "同规格对比：该 GPU 每种计价方式中最便宜的报价，实例为 {shape} 卡（或其倍数），与所购服务器相同；"
        "只有该规格无报价时才改用更小的实例（并有警告说明）",
    },
    "t_break_even_month": {
        "en": "cash view: purchase at month 0 plus power, facility and operations each month, against pay-per-use "
        "rent (on demand, else spot); financing and resale left out",
        "zh": "现金流口径：第 0 个月购置，之后每月计电费、机房和运维，对比按使用付费的租用（按需，否则竞价）；"
        "不计资金成本和残值",
    },
    "t_break_even_rent": {
        "en": "{pricing} at {provider}, {price:g} USD per GPU-hour, {instances} x {gpus}-GPU instances",
        "zh": "{provider} {pricing}，每 GPU 小时 {price:g} USD，{instances} 台 {gpus} 卡实例",
    },
}
