"""Caffe's LRN for the BVLC peers, runnable in bf16.

PyTorch 1.13's LocalResponseNorm pads and averages with avg_pool3d, which
has no bfloat16 kernel, so a bf16 model with LRN fails; a PyTorch user
would normalise in fp32 there, as this does (scriptable, for "frozen").
"""
import torch
import torch.nn.functional as F


class LRN(torch.nn.Module):
    """LocalResponseNorm(size, alpha, beta, k); bf16 input computed in fp32."""

    def __init__(self, size: int, alpha: float, beta: float, k: float):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.bfloat16:
            return F.local_response_norm(x.float(), self.size, self.alpha, self.beta, self.k).to(x.dtype)
        return F.local_response_norm(x, self.size, self.alpha, self.beta, self.k)
