"""Peer for pipeline-vs-torchvision.sh: PIL + torchvision transforms doing
what dlgauge's loader does in train mode (RandomResizedCrop(224), horizontal
flip, ToTensor, Normalize with ImageNet mean/std, batches of 32), through a
torch DataLoader with N worker processes.  Prints images/s."""
import sys
import time

import torch
from PIL import Image
import torchvision.transforms as T


class Folder(torch.utils.data.Dataset):
    def __init__(self, root, lst):
        self.items = []
        with open(lst) as f:
            for line in f:
                path, label = line.rsplit(" ", 1)
                self.items.append((root + "/" + path, int(label)))
        self.tf = T.Compose([
            T.RandomResizedCrop(224),
            T.RandomHorizontalFlip(),
            T.ToTensor(),
            T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
        ])

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        with open(path, "rb") as f:
            img = Image.open(f).convert("RGB")
        return self.tf(img), label


def init(_):
    torch.set_num_threads(1)


def main():
    root, lst, workers, batches = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    torch.set_num_threads(1)
    ds = Folder(root, lst)
    dl = torch.utils.data.DataLoader(ds, batch_size=32, shuffle=True, num_workers=workers,
                                     worker_init_fn=init, drop_last=True,
                                     persistent_workers=True, prefetch_factor=4)
    it = iter(dl)
    for _ in range(2):  # warm-up: workers started, first batches out
        next(it)
    t0 = time.perf_counter()
    n = 0
    while n < batches:
        try:
            x, _ = next(it)
        except StopIteration:
            it = iter(dl)
            continue
        n += 1
    dt = time.perf_counter() - t0
    print("images_per_s %.1f" % (n * 32 / dt))


if __name__ == "__main__":
    main()
