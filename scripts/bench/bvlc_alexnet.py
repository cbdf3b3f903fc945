"""BVLC AlexNet in PyTorch, the network dlgauge's alexnet workload builds
(core/nn/models/models.c): LRN after conv1 and conv2, two groups in conv2,
conv4 and conv5, Caffe's ceil-mode pooling.  torchvision's AlexNet is the
"one weird trick" variant (no LRN, no groups, other widths), so the peers
of scripts/bench/cnn-vs-pytorch.sh and scripts/gpu-check.sh build this one.
60,965,224 parameters at 1000 classes, at crop 224 as at 227.
"""
import torch
from bvlc_lrn import LRN


def relu_conv(cin, cout, k, s=1, p=0, g=1):
    return [torch.nn.Conv2d(cin, cout, k, s, p, groups=g), torch.nn.ReLU(inplace=True)]


def relu_fc_drop(cin, cout):
    return [torch.nn.Linear(cin, cout), torch.nn.ReLU(inplace=True), torch.nn.Dropout(0.5)]


def bvlc_alexnet(num_classes=1000):
    """Caffe's bvlc_alexnet (LRN is Caffe's: alpha divided by size)."""
    pool = lambda: torch.nn.MaxPool2d(3, 2, ceil_mode=True)
    lrn = lambda: LRN(5, alpha=1e-4, beta=0.75, k=1.0)
    return torch.nn.Sequential(
        *relu_conv(3, 96, 11, 4), lrn(), pool(),
        *relu_conv(96, 256, 5, 1, 2, 2), lrn(), pool(),
        *relu_conv(256, 384, 3, 1, 1), *relu_conv(384, 384, 3, 1, 1, 2), *relu_conv(384, 256, 3, 1, 1, 2),
        pool(), torch.nn.Flatten(),
        *relu_fc_drop(256 * 6 * 6, 4096), *relu_fc_drop(4096, 4096), torch.nn.Linear(4096, num_classes))


if __name__ == "__main__":
    m = bvlc_alexnet()
    print(sum(p.numel() for p in m.parameters()), tuple(m(torch.randn(1, 3, 224, 224)).shape))
