"""How fast a layout runs: memory, decode, prefill, training, diffusion, engines, kernels."""
