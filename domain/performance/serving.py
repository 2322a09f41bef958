"""Serving speed of one model copy: decode steps, prefill, the time between tokens users observe, and TTFT."""

from __future__ import annotations

import math

from domain.catalog import Gpu, LlmModel
from domain.hardware.collectives import (
    ALL_TO_ALL_US,
    ALPHA_EXPONENT,
    CUSTOM_ALL_REDUCE_MAX_BYTES,
    FLOOR_GROWTH_PER_DOUBLING,
    INTER_NODE_GBPS,
    INTER_NODE_HOP_US,
    LINK_ALPHA_US,
    MBU_DECAY_PER_DOUBLING,
    RING_HOP_US,
    TWO_STAGE_ALL_REDUCE_FROM_BYTES,
    ring_link_share,
)
from domain.hardware.efficiency import (
    BLOCK_FP8_MOE,
    EFFICIENCY,
    GEMM_SIZE,
    Factor,
    Scenario,
    doublings,
    family_of,
    shared,
)
from domain.hardware.links import link_gbps, link_kind
from domain.hardware.peaks import compute_tflops
from domain.performance import mla
from domain.performance.engine_releases import TODAY, DecodeEffects
from domain.performance.fp8_gemms import block_fp8_moe_extra, dense_gemms_per_layer, fp8_gemm_latency
from domain.performance.layout import Bound, Layout, ServingPoint
from domain.performance.memo import Memo
from domain.performance.memory import BYTES_PER_PARAM, experts_touched, kv_bytes_per_sequence, matmul_params, moe_split
from domain.performance.w4_moe import w4_moe_latency

WEIGHT_ONLY = ("int4", "fp4")


def _moe_share(model: LlmModel) -> float:
    if model.moe is None:
        return 0.0
    return (model.layers - model.moe.first_dense_layers) / model.layers


# Points one speed model keeps: a binary search asks ~11 batches per scenario, so a few hundred cover many requests.
POINTS_KEPT = 256


class InstanceSpeed:
    """One model copy (a `Layout` of GPUs of one kind) serving requests of one shape."""

    # What depends on neither the batch nor the scenario is computed once, and the prefill once per scenario, so a
    # search over layouts, batch sizes and the three scenarios costs a few float operations per point.

    def __init__(
        self,
        model: LlmModel,
        gpu: Gpu,
        precision: str,
        kv_precision: str,
        layout: Layout,
        input_tokens: int,
        output_tokens: int,
        engine_speedup: float = 1.0,
        two_stage_all_reduce: bool = False,
        release: DecodeEffects = TODAY,
        engine: str = "",
    ) -> None:
        self.model, self.gpu, self.precision, self.layout = model, gpu, precision, layout
        self.family = family = family_of(gpu)
        self.engine_speedup = engine_speedup
        self.release = release  # what an old engine release lacked (reproductions only)
        self.input_tokens, self.output_tokens = input_tokens, output_tokens
        self.gpus = layout.gpus
        pipeline = layout.pipeline
        stage_gpus = self.gpus // pipeline
        context = input_tokens + output_tokens / 2  # the mean context while decoding
        self.layers = model.layers / pipeline  # per pipeline stage
        base, per_expert = moe_split(model)
        bpp = BYTES_PER_PARAM[precision]
        # Bytes one GPU of a stage reads per step: always-read weights split by the attention group, experts by the
        # whole stage.
        self.base_bytes = base * bpp / (layout.attention_tensor * pipeline)
        # Weights an old release's decode read beyond the checkpoint's, split like attention (reproductions only).
        self.base_bytes += release.extra_bytes / (layout.attention_tensor * pipeline)
        self.expert_bytes = per_expert * bpp / (stage_gpus * pipeline)
        self.all_weight_bytes = model.params_b * 1e9 * bpp
        # An engine release without today's decode-attention kernel reads the cache as if it were larger.
        self.kv_bytes_per_sequence = release.kv_read * kv_bytes_per_sequence(
            model, kv_precision, context, layout.attention_tensor, pipeline
        )
        self.bandwidth = gpu.memory_bandwidth_gbps * 1e9
        peak = compute_tflops(gpu, precision) or 1.0
        # MXFP4 checkpoints (gpt-oss) run MXFP4 weights times MXFP8 activations on FP4 parts: 8-bit GEMMs.
        self.w4a8 = precision == "fp4" and model.native_precision == "mxfp4" and bool(gpu.tflops.fp4 and gpu.tflops.fp8)
        if self.w4a8:
            peak = gpu.tflops.fp8 or peak
        self.peak_flops = peak * 1e12
        # Decode attention runs in 16-bit whatever the weights: FP8 caches are dequantised to bf16 first (FlashMLA,
        # github.com/deepseek-ai/FlashMLA: "It dequantizes the cache to bfloat16 and performs attention computation
        # in bfloat16"; 660 TFLOPS of the H800's 989, about the prefill GEMMs' share of the 16-bit peak).
        self.attention_peak_flops = (compute_tflops(gpu, "bf16") or peak) * 1e12
        self.stage_gpus = stage_gpus
        self.active_flops = 2.0 * matmul_params(model)  # per token through the weights
        self.decode_extra_flops = 2.0 * release.extra_params  # per decoded token through those extra weights
        self.expert_flops = 2.0 * per_expert  # per row through one routed expert, all MoE layers
        self.routed_flops = self.expert_flops * (model.moe.experts_per_token if model.moe else 0)  # per token
        # Block-scaled FP8 checkpoints (HF quant_method fp8) run their routed experts slower than per-tensor FP8.
        block_fp8 = precision == "fp8" and model.native_precision == "fp8" and model.moe is not None
        self.block_fp8_moe = BLOCK_FP8_MOE.get(family) if block_fp8 else None
        # Weight-only 4-bit GEMMs computing in 16-bit (no FP4 tensor cores) dequantise as they go.
        self.w4_compute = precision in WEIGHT_ONLY and not (precision == "fp4" and gpu.tflops.fp4)
        self.fp8_gemms = precision in ("fp8", "int8") or self.w4a8
        self.attention_flops = mla.attention_flops_per_position(model) * context * model.layers  # per decoded token
        row = EFFICIENCY[family]
        self.mbu = row["decode_mbu_moe" if model.moe else "decode_mbu_dense"]
        # FP8 weight GEMMs on families with measured tables: a fixed latency per GEMM, the bytes read at the full
        # rate (instead of the fitted share of the byte saving, which also slowed the KV-cache reads).
        self.fp8_gemm_us = fp8_gemm_latency(engine, family, model) if precision == "fp8" else None
        # The share of a precision's byte saving decode realises, where one applies.
        self.decode_share: Factor | None = None
        if precision in WEIGHT_ONLY:
            self.decode_share = shared("w4_decode")
        elif precision in ("fp8", "int8") and self.fp8_gemm_us is None:
            self.decode_share = row["fp8_decode"]
        self.fp8_gemms_per_stage = self.layers * dense_gemms_per_layer(model)
        # 4-bit weight-only routed experts on engines and families with measured tables: a fixed latency per MoE layer
        # and per expert, the expert bytes at the tables' rate (instead of the bandwidth times the weight-only share).
        self.w4_moe = w4_moe_latency(engine, family, model, precision, layout.expert)
        self.moe_layers = self.layers * _moe_share(model)
        self.mla_decode_us = mla.decode_extra_latency(engine, family, model)  # the engine's MLA block, per layer
        # The operand width the MLA block's prefill GEMMs run at (its measured curves are per width).
        self.mla_bits = 8 if self.fp8_gemms else mla.gemm_bits(precision, bool(gpu.tflops.fp4))
        self.moe_extra_us = block_fp8_moe_extra(engine, family, model, precision)  # the engine's MoE layer, at batch 1
        self.mfu = row["prefill_mfu"]
        self.floor_us = row["step_floor_us_moe" if model.moe else "step_floor_us_dense"]
        # The GEMMs' rate in this precision over the 16-bit rate, where it differs.
        self.gemm_precision: Factor | None = None
        if self.fp8_gemms:
            self.gemm_precision = shared("fp8_prefill")  # 1.5-1.8x the 16-bit rate, prefill and decode alike
        elif precision == "fp4" and gpu.tflops.fp4:
            self.gemm_precision = row["fp4_compute"]
        elif self.w4_compute:
            self.gemm_precision = shared("w4_compute")
        self.half_rows = shared("moe_gemm_half_rows")
        # Families with measured GEMM tables: the dense GEMMs' MFU by the size of one GPU's share of a layer.
        sized = GEMM_SIZE.get(family)
        self.gemm_mfu = sized[0] if sized else row["prefill_mfu"]
        layer_params = base / (model.layers * layout.attention_tensor)
        # Tiny layers are launch-bound (the per-layer floor sets their time), so the share stops shrinking at 5%.
        self.gemm_size_share = max(0.05, layer_params / (layer_params + sized[1])) if sized else 1.0
        tensor = layout.attention_tensor
        self.doublings = doublings(stage_gpus)
        # A weight read in shards slows as its shards shrink: the always-read weights split by the attention group,
        # routed experts by the GPUs that share one expert (none under expert parallelism, which reads them whole).
        self.base_doublings = doublings(layout.attention_tensor)
        self.expert_doublings = doublings(max(1, stage_gpus // max(1, layout.expert)))
        kind = link_kind(gpu, tensor)
        self.link_alpha_us = LINK_ALPHA_US[kind]
        self.alpha_scale = max(1, tensor - 1) ** ALPHA_EXPONENT[kind]
        self.peers = tensor - 1
        # PCIe peers behind one bridge gain nothing from a ring (the tables' large messages move at ~3 GB/s).
        self.ring = kind not in ("pcie", "pcie_host")
        self.ring_share = 2.0 * (tensor - 1) / tensor
        self.link_bytes_per_s = link_gbps(gpu, tensor) * 1e9
        # Messages from this size take the engine's two-stage custom all-reduce (0: never).
        nvlinked = kind in ("nvswitch", "nvlink") and tensor > 2 and tensor <= gpu.interconnect.domain_gpus
        two_stage = two_stage_all_reduce and nvlinked
        self.two_stage_from = TWO_STAGE_ALL_REDUCE_FROM_BYTES[4 if tensor <= 4 else 8] if two_stage else 0
        # Groups wider than the GPU's NVLink domain reach the GPUs outside it over the inter-node network.
        domain = gpu.interconnect.domain_gpus
        self.tensor_off_domain = tensor > domain
        # The measured share of an NVLink domain's rate (the inter-node rate is already what NCCL achieves).
        self.ring_link_share = ring_link_share(family, tensor) if self.ring and not self.tensor_off_domain else None
        self.expert_off_domain = max(0.0, 1.0 - domain / stage_gpus)  # share of an all-to-all's peers outside
        # Two all-reduces per layer with tensor-parallel attention; expert-parallel MoE layers all-to-all instead.
        self.all_reduces = 2.0 * self.layers if tensor > 1 else 0.0
        if layout.expert > 1 and tensor == 1:
            self.all_reduces = 0.0
        self.all_to_alls = self.moe_layers if layout.expert > 1 else 0.0
        if tensor > 1 and model.moe is not None and layout.expert == 1:
            self.all_reduces += self.moe_layers  # the MoE combine under tensor-parallel experts
        # Pure functions of this model (fixed above) and their arguments: searches ask for the same batch several
        # times, and requests of one shape share this model, so a bounded set of points is kept.
        self._expected_prefill = Memo(self._prefill)
        self._bandwidths = Memo(self._shard_bandwidths)
        self._quiet_point = Memo(self._point, POINTS_KEPT)

    def _shard_bandwidths(self, scenario: Scenario) -> tuple[float, float, float]:
        """Bytes per second a step reads (KV cache, always-read weights, routed experts): each by its own shards."""
        shards = (self.doublings, self.base_doublings, self.expert_doublings)
        kv, base, experts = (self.bandwidth * self._mbu(scenario, doublings) for doublings in shards)
        return kv, base, experts

    def _mbu(self, scenario: Scenario, shard_doublings: float) -> float:
        mbu = self.mbu.at(scenario) * MBU_DECAY_PER_DOUBLING.at(scenario) ** shard_doublings * self.engine_speedup
        if self.decode_share is not None:
            mbu *= self.decode_share.at(scenario)
        return mbu

    def point(self, batch: int, scenario: Scenario, arrivals_per_s: float = 0.0) -> ServingPoint:
        """`batch` sequences at a time in a scenario; `arrivals_per_s` new requests a second for the TTFT queue."""
        if not arrivals_per_s:
            return self._quiet_point(batch, scenario, 0.0)
        return self._point(batch, scenario, arrivals_per_s)

    def _point(self, batch: int, scenario: Scenario, arrivals_per_s: float) -> ServingPoint:
        step_s, bound = self.step(batch, scenario)
        alone, prefill_compute = self.prefill(scenario)
        output_tokens = self.output_tokens
        cycle = output_tokens * step_s + batch * prefill_compute
        tokens_per_s = batch * output_tokens / cycle
        # TPOT as serving benchmarks measure it, (latency - TTFT) / (output tokens - 1) (vLLM's benchmark_serving.py:
        # "latency_minus_ttft = outputs[i].latency - outputs[i].ttft; tpot = latency_minus_ttft / (output_len - 1)";
        # SGLang's bench_serving the same): a request's own prefill is in its TTFT, and between its first and last
        # token each of the other batch - 1 requests prefills once.
        gaps = output_tokens - 1
        tpot_s = step_s + (batch - 1) * prefill_compute / gaps if gaps > 0 else step_s
        # Prefills queue behind each other (M/D/1 wait) once requests arrive faster than one prefill at a time.
        busy = min(0.95, arrivals_per_s * alone)
        wait = busy * alone / (2 * (1 - busy)) if busy > 0 else 0.0
        # Under load a prefill shares each step with the batch's decodes (chunked prefill): half a step of delay.
        sharing = 0.5 * step_s if batch > 1 else 0.0
        return ServingPoint(
            batch=batch,
            step_s=step_s,
            tpot_s=tpot_s,
            ttft_s=alone + sharing + wait + step_s,
            tokens_per_s=tokens_per_s,
            requests_per_s=tokens_per_s / output_tokens,
            bound=bound,
        )

    def step(self, batch: float, scenario: Scenario) -> tuple[float, Bound]:
        """One decode step of `batch` sequences of the mean context: roofline + collectives + floor; its bound."""
        layout = self.layout
        # Under continuous batching an engine keeps one micro-batch per pipeline stage in flight (vLLM's virtual
        # engines, SGLang's and TensorRT-LLM's micro-batches): every stage works on its own share of the batch at once,
        # and a sequence's token passes the stages one after another. A step is then `pipeline` ticks of one stage on
        # batch / pipeline sequences; with fewer sequences than stages the idle stages wait.
        batch = max(1.0, batch / layout.pipeline)
        touched = experts_touched(self.model, batch)
        if layout.dp_attention:
            # Each GPU holds its own requests' cache and reads the experts its share of the tokens touches.
            per_gpu_batch = batch / self.stage_gpus
            kv_bytes = max(1.0, per_gpu_batch) * self.kv_bytes_per_sequence
        else:
            kv_bytes = batch * self.kv_bytes_per_sequence
        expert_bytes = touched * self.expert_bytes
        bandwidth, base_bandwidth, expert_bandwidth = self._bandwidths(scenario)
        base_s = self.base_bytes / base_bandwidth
        expert_s = expert_bytes / expert_bandwidth
        rate = self.peak_flops * self._gemm_mfu(scenario)
        attention_rate = self.attention_peak_flops * self.mfu.at(scenario)
        # The GEMMs and the attention are separate kernels run one after the other: each is bound by its own
        # roofline (weights vs GEMM FLOPs, KV cache vs attention FLOPs), and their times add.
        gemm_flops = (
            (self.active_flops + self.decode_extra_flops) * batch + self._expert_rows(touched, scenario, batch)
        ) / self.gpus
        attention_flops = self.attention_flops * batch / self.gpus
        if self.w4_moe is None:
            t_gemm = max(base_s + expert_s, gemm_flops / rate)
        else:
            experts = self.w4_moe.seconds(self.moe_layers, touched, expert_bytes, scenario)
            t_gemm = max(base_s + experts, gemm_flops / rate)
        if self.fp8_gemm_us is not None:
            t_gemm += self.fp8_gemms_per_stage * self.fp8_gemm_us.at(scenario) * 1e-6
        if self.moe_extra_us is not None:
            t_gemm += self.moe_layers * self.moe_extra_us.at(scenario) * 1e-6 / math.sqrt(batch)
        t_attention = max(kv_bytes / bandwidth, attention_flops / attention_rate)
        if self.mla_decode_us is not None:
            t_attention += self.layers * self.mla_decode_us.at(scenario) * 1e-6
        t_memory = base_s + expert_s + kv_bytes / bandwidth
        t_compute = gemm_flops / rate + attention_flops / attention_rate

        t_comm = self._collective_seconds(batch, scenario)
        floor = self.floor_us.at(scenario) * (1 + FLOOR_GROWTH_PER_DOUBLING.at(scenario) * self.doublings)
        stage = t_gemm + t_attention + t_comm + self.layers * floor * 1e-6
        seconds = layout.pipeline * stage + (layout.pipeline - 1) * INTER_NODE_HOP_US.at(scenario) * 1e-6
        seconds = seconds * self.release.step + self.release.host_s
        if t_comm > t_gemm + t_attention:
            return seconds, "interconnect"
        return seconds, "memory" if t_memory >= t_compute else "compute"

    def prefill(self, scenario: Scenario) -> tuple[float, float]:
        """(time to prefill one sequence alone, the compute part that also competes with decoding under load)."""
        return self._expected_prefill(scenario)  # type: ignore[no-any-return]

    def _prefill(self, scenario: Scenario) -> tuple[float, float]:
        model, tokens = self.model, self.input_tokens
        d_attn = model.attention_heads * model.head_dim
        flops = self.active_flops * tokens + 2.0 * model.layers * tokens * tokens * d_attn
        flops += self._expert_rows(experts_touched(model, tokens), scenario, tokens)
        mfu = self._gemm_mfu(scenario)
        rate = self.peak_flops * mfu
        # MLA blocks (replicated down-projections included) run at their own measured rate; the rest as GEMMs.
        mla_flops = 0.0
        if model.mla is not None:
            mla_flops = mla.prefill_flops(model, tokens, self.layout.attention_tensor)
            flops -= 2.0 * model.layers * tokens * (mla.block_params(model) + tokens * d_attn)
            heads = model.attention_heads / self.layout.attention_tensor
            share = mla.prefill_mfu(self.family, self.mla_bits, heads, scenario, self.mfu.at(scenario))
            mla_rate = self.attention_peak_flops * share if share else rate
            mla_flops *= rate / mla_rate  # in GEMM-rate FLOP-equivalents
        flops += mla_flops
        # A request's prefill runs on its attention group (one GPU under data-parallel attention, its stage's GPUs
        # otherwise); for one request the pipeline stages run one after another.
        pipeline = self.layout.pipeline
        prefill_gpus = self.layout.attention_tensor if self.layout.dp_attention else self.stage_gpus
        t_compute = flops / (prefill_gpus * rate)
        weights = self.all_weight_bytes / self.gpus
        t_memory = weights / (self.bandwidth * self.mbu.at(scenario))
        stage_comm = self._collective_seconds(tokens, scenario)
        # Under load the batch's prefills share all the copy's GPUs: data-parallel attention groups take different
        # requests, and pipeline stages take different requests' chunks at the same time.
        shared = flops / (self.gpus * rate) if self.layout.dp_attention or pipeline > 1 else t_compute
        slower = self.release.prefill  # an old release's prefill kernels (reproductions only)
        return slower * (max(t_compute, t_memory) + stage_comm * pipeline), slower * (shared + stage_comm)

    def _gemm_mfu(self, scenario: Scenario) -> float:
        mfu = self.gemm_mfu.at(scenario) * self.gemm_size_share
        if self.gemm_precision is not None:
            mfu *= self.gemm_precision.at(scenario)
        return mfu

    def _expert_rows(self, touched: float, scenario: Scenario, tokens: float = 0.0) -> float:
        """FLOP-equivalents a step of `tokens` tokens loses to its grouped expert GEMMs (over the dense rate)."""
        # Each expert it touches costs as if it ran `half_rows` more rows (efficiency rows / (rows + half)).
        lost = touched * self.expert_flops * self.half_rows.at(scenario)
        if self.block_fp8_moe is not None:
            share = self.block_fp8_moe.at(scenario)
            # The scales slow the rows' math, not the partial tiles' latency (at 128 rows the tables' ratio nears 1).
            lost += tokens * self.routed_flops * (1.0 / share - 1.0)
        return lost

    def _collective_seconds(self, tokens: float, scenario: Scenario) -> float:
        """All-reduces and expert all-to-alls of `tokens` tokens in one stage."""
        # An all-reduce takes the faster of the one-shot path (alpha + every peer's message over the link: small decode
        # messages) and the ring (a hop per step + 2(n-1)/n of the message: large prefill messages).
        seconds = 0.0
        if self.all_reduces:
            message = tokens * self.model.hidden_size * 2.0
            alpha = self.link_alpha_us.at(scenario) * self.alpha_scale * 1e-6
            link = self.link_bytes_per_s
            if self.tensor_off_domain:
                link = INTER_NODE_GBPS.at(scenario) * 1e9
                alpha += INTER_NODE_HOP_US.at(scenario) * 1e-6
            one_shot = alpha + self.peers * message / link
            if self.two_stage_from and self.two_stage_from <= message < CUSTOM_ALL_REDUCE_MAX_BYTES:
                one_shot = 2 * alpha + self.ring_share * message / link  # reduce-scatter, then all-gather
            if self.ring:
                ring_link = link * (self.ring_link_share.at(scenario) if self.ring_link_share else 1.0)
                ring = 2 * self.peers * RING_HOP_US * 1e-6 + alpha + self.ring_share * message / ring_link
                # Messages past the custom kernels' buffer go to NCCL's ring whatever the group (the tables' pairs
                # move 32 MiB at the ring's share, not at the one-shot path's full link rate).
                one_shot = ring if message >= CUSTOM_ALL_REDUCE_MAX_BYTES else min(one_shot, ring)
            seconds += self.all_reduces * one_shot
        if self.all_to_alls:
            experts = self.model.moe.experts_per_token if self.model.moe else 1
            message = tokens * experts * self.model.hidden_size * 1.0 / self.stage_gpus  # fp8 dispatch
            outside = self.expert_off_domain
            seconds_per_byte = (1.0 - outside) / (link_gbps(self.gpu, self.stage_gpus) * 1e9)
            latency_us = ALL_TO_ALL_US.at(scenario)
            if outside:
                # Dispatch and combine each cross the network once for the tokens bound outside the domain.
                seconds_per_byte += outside / (INTER_NODE_GBPS.at(scenario) * 1e9)
                latency_us += 2 * INTER_NODE_HOP_US.at(scenario)
            seconds += self.all_to_alls * (latency_us * 1e-6 + 2 * message * seconds_per_byte)
        return seconds


def serving_point(
    model: LlmModel,
    gpu: Gpu,
    precision: str,
    kv_precision: str,
    layout: Layout,
    batch: int,
    input_tokens: int,
    output_tokens: int,
    scenario: Scenario,
) -> ServingPoint:
    """Continuous batching on one model copy: decode steps and the batch's prefills share the GPUs."""
    speed = InstanceSpeed(model, gpu, precision, kv_precision, layout, input_tokens, output_tokens)
    return speed.point(batch, scenario)
