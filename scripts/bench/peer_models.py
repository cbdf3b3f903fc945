"""The PyTorch peers' models by dlgauge's workload name: BVLC's AlexNet and
GoogLeNet as dlgauge runs them (bvlc_alexnet.py, bvlc_googlenet.py), else
torchvision's model of that name; 1000 classes."""
import torchvision

from bvlc_alexnet import bvlc_alexnet
from bvlc_googlenet import bvlc_googlenet


def peer_model(name, classes=1000):
    if name == "googlenet":
        return bvlc_googlenet(classes)
    if name == "alexnet":
        return bvlc_alexnet(classes)
    return getattr(torchvision.models, name)(num_classes=classes)
