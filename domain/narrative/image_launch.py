"""The command that generates an image option's images: a diffusers pipeline per GPU, at the plan's batch."""

from __future__ import annotations

from domain.catalog import DiffusionModel
from domain.workloads.requests import ImageGenerationWorkload
from domain.workloads.results import Launch

# diffusers is the reference implementation every SDXL, SD3 and FLUX checkpoint ships for; 8-bit runs through
# torchao's quantize_ on the denoiser, as the diffusers quantization guide shows.
_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp8": "bfloat16", "int8": "bfloat16"}
_QUANTIZE = {"fp8": "float8_dynamic_activation_float8_weight", "int8": "int8_weight_only"}


def diffusers_repo(model: DiffusionModel) -> str:
    """The model's Hugging Face repository from its aliases, else its catalog id."""
    return next((alias for alias in model.aliases if "/" in alias), model.id)


def image_launch(model: DiffusionModel, workload: ImageGenerationWorkload, gpus: int, batch: int) -> Launch:
    """One process per GPU reads prompts (one a line) and writes PNGs, `batch` prompts per pipeline call."""
    dtype = _DTYPES[workload.precision]
    code = [
        "import os, sys, torch, diffusers",
        f"pipe = diffusers.AutoPipelineForText2Image.from_pretrained('{diffusers_repo(model)}', "
        f"torch_dtype=torch.{dtype}).to('cuda')",
    ]
    quantize = _QUANTIZE.get(workload.precision)
    if quantize:
        code.append(f"from torchao.quantization import quantize_, {quantize}")
        code.append(f"quantize_(getattr(pipe, 'transformer', None) or pipe.unet, {quantize}())")
    code += [
        "prompts = sys.stdin.read().splitlines()",
        "tag = os.environ.get('CUDA_VISIBLE_DEVICES', '0')",
        f"[image.save(f'{{tag}}-{{i + j}}.png') for i in range(0, len(prompts), {batch}) for j, image in "
        f"enumerate(pipe(prompts[i:i + {batch}], num_inference_steps={workload.steps}, width={workload.width}, "
        f"height={workload.height}).images)]",
    ]
    python = 'python -c "' + "; ".join(code) + '"'
    if gpus == 1:
        return Launch(engine="diffusers", command=f"{python} < prompts.txt")
    command = (
        f"split -d -n l/{gpus} prompts.txt part- && for gpu in $(seq 0 {gpus - 1}); do "
        f"CUDA_VISIBLE_DEVICES=$gpu {python} < part-$(printf %02d $gpu) & done; wait"
    )
    return Launch(engine="diffusers", command=command)
