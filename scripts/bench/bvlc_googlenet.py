"""BVLC GoogLeNet in PyTorch, the network dlgauge's googlenet workload builds
(core/nn/models/models.c): LRN after the stem, 5x5 convolutions in the
third branch, no batch norm, the main classifier only.  torchvision's
GoogLeNet differs (batch norm after every convolution, 3x3 kernels in its
"5x5" branches), so the peers of scripts/bench/cnn-vs-pytorch.sh and
scripts/gpu-check.sh build this one.  6,998,552 parameters at 1000 classes.
"""
import torch
from bvlc_lrn import LRN


def relu_conv(cin, cout, k, s=1, p=0):
    return [torch.nn.Conv2d(cin, cout, k, s, p), torch.nn.ReLU(inplace=True)]


class Inception(torch.nn.Module):
    """BVLC inception module: 1x1 | 1x1->3x3 | 1x1->5x5 | maxpool->1x1."""

    def __init__(self, cin, c1, r3, c3, r5, c5, pp):
        super().__init__()
        seq = torch.nn.Sequential
        self.b1 = seq(*relu_conv(cin, c1, 1))
        self.b2 = seq(*relu_conv(cin, r3, 1), *relu_conv(r3, c3, 3, 1, 1))
        self.b3 = seq(*relu_conv(cin, r5, 1), *relu_conv(r5, c5, 5, 1, 2))
        self.b4 = seq(torch.nn.MaxPool2d(3, 1, 1, ceil_mode=True), *relu_conv(cin, pp, 1))
        self.cout = c1 + c3 + c5 + pp

    def forward(self, x):
        return torch.cat([self.b1(x), self.b2(x), self.b3(x), self.b4(x)], 1)


def bvlc_googlenet(num_classes=1000):
    """Caffe's bvlc_googlenet deploy net (LRN is Caffe's: alpha divided by size)."""
    pool = lambda: torch.nn.MaxPool2d(3, 2, ceil_mode=True)
    lrn = lambda: LRN(5, alpha=1e-4, beta=0.75, k=1.0)
    layers = [*relu_conv(3, 64, 7, 2, 3), pool(), lrn(), *relu_conv(64, 64, 1),
              *relu_conv(64, 192, 3, 1, 1), lrn(), pool()]
    cin = 192
    for spec in ("64 96 128 16 32 32", "128 128 192 32 96 64", "pool",
                 "192 96 208 16 48 64", "160 112 224 24 64 64", "128 128 256 24 64 64",
                 "112 144 288 32 64 64", "256 160 320 32 128 128", "pool",
                 "256 160 320 32 128 128", "384 192 384 48 128 128"):
        if spec == "pool":
            layers.append(pool())
            continue
        m = Inception(cin, *map(int, spec.split()))
        layers.append(m)
        cin = m.cout
    layers += [torch.nn.AvgPool2d(7, 1), torch.nn.Flatten(), torch.nn.Dropout(0.4),
               torch.nn.Linear(cin, num_classes)]
    return torch.nn.Sequential(*layers)
