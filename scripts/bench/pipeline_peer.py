"""Peer for pipeline-vs-torchvision.sh: PIL + torchvision doing what
dlgauge's loader does in train mode (RandomResizedCrop to CROP with scale
(0.08, 1) and ratio (3/4, 4/3), bilinear with PIL's antialiasing, horizontal
flip, ToTensor, Normalize with ImageNet mean/std, batches of BATCH collated
in the workers), through a torch DataLoader with WORKERS worker processes.
Prints images/s.

  pipeline_peer.py ROOT LIST WORKERS BATCHES [--crop 224] [--batch 32]
                   [--decode draft|full]
  pipeline_peer.py --about
  pipeline_peer.py ROOT LIST --check N [--crop 224]

--decode draft (the default) decodes each JPEG at the DCT reduction dlgauge's
loader picks for the crop window (dlg_jpeg_pick_scale in core/data/jpeg.c):
PIL's Image.draft before the pixels are read, the window mapped into the
reduced image, one resize of that box.  --decode full is stock torchvision
(full-size decode, T.RandomResizedCrop), kept for reference.  --about prints
the PIL and libjpeg this python runs; --check decodes N crops both ways and
prints the mean absolute difference in 8-bit levels."""
import argparse
import os
import sys
import time

import torch
from PIL import Image, features
import torchvision
import torchvision.transforms as T

SCALE = (0.08, 1.0)
RATIO = (3.0 / 4.0, 4.0 / 3.0)
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def pick_reduction(win_w, win_h, out):
    """The DCT reduction 1/d dlgauge decodes a win_w x win_h window resized
    to out x out at: none unless the output is at most half the window on
    both axes, then the largest whose reduced window still covers out.
    libjpeg-turbo also offers dlgauge 3/8; PIL's draft only 1/2, 1/4, 1/8,
    so where dlgauge takes 3/8 this takes 1/2 (a larger decode)."""
    if 2 * out > win_w or 2 * out > win_h:
        return 1
    for d in (8, 4, 2):
        if win_w / d >= out and win_h / d >= out:
            return d
    return 1


def draft_resized_crop(img, top, left, h, w, out):
    """img (opened, not yet loaded) cut to the window and resized to
    out x out, decoded at the window's reduction: a DCT-scaled pixel i
    covers source pixels [i*d, (i+1)*d), so the window maps by 1/d, not by
    the rounded-up reduced size over the full one (as dlgauge maps it)."""
    d = pick_reduction(w, h, out)
    W = img.width
    # draft takes the largest 1/s with s <= min(W // size_w, H // size_h):
    # asking for W // d x H // d makes s exactly d.  It answers the full
    # image's box in reduced pixels (W / s wide), or None (not a JPEG).
    drafted = img.draft("RGB", (W // d, img.height // d)) if d > 1 else None
    f = drafted[1][2] / W if drafted else 1.0
    img = img.convert("RGB")
    return img.resize((out, out), Image.BILINEAR,
                      box=(left * f, top * f, (left + w) * f, (top + h) * f))


class DraftRandomResizedCrop:
    """T.RandomResizedCrop(out) on an unloaded PIL JPEG, decoding it at the
    reduction the window allows."""

    def __init__(self, out):
        self.out = out

    def __call__(self, img):
        top, left, h, w = T.RandomResizedCrop.get_params(img, list(SCALE), list(RATIO))
        return draft_resized_crop(img, top, left, h, w, self.out)


class Folder(torch.utils.data.Dataset):
    def __init__(self, root, lst, crop, decode):
        self.items = []
        with open(lst) as f:
            for line in f:
                path, label = line.rsplit(" ", 1)
                self.items.append((os.path.join(root, path), int(label)))
        self.draft = decode == "draft"
        crop_tf = (DraftRandomResizedCrop(crop) if self.draft
                   else T.RandomResizedCrop(crop, SCALE, RATIO))
        self.tf = T.Compose([
            crop_tf,
            T.RandomHorizontalFlip(),
            T.ToTensor(),
            T.Normalize(MEAN, STD),
        ])

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        with open(path, "rb") as f:
            img = Image.open(f)
            if not self.draft:
                img = img.convert("RGB")
            return self.tf(img), label


def init(_):
    torch.set_num_threads(1)


def run(args):
    torch.set_num_threads(1)
    ds = Folder(args.root, args.list, args.crop, args.decode)
    dl = torch.utils.data.DataLoader(ds, batch_size=args.batch, shuffle=True,
                                     num_workers=args.workers, worker_init_fn=init,
                                     drop_last=True, persistent_workers=args.workers > 0,
                                     prefetch_factor=4 if args.workers > 0 else 2)
    it = iter(dl)
    for _ in range(2):  # warm-up: workers started, first batches out
        next(it)
    t0 = time.perf_counter()
    n = 0
    while n < args.batches:
        try:
            next(it)
        except StopIteration:
            it = iter(dl)
            continue
        n += 1
    dt = time.perf_counter() - t0
    print("images_per_s %.1f" % (n * args.batch / dt))


def loaded_lib(stem):
    """Path of the shared library named stem* this process has mapped."""
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if os.path.basename(p).startswith(stem):
                return p
    return "?"


def about():
    import PIL
    simd = ".post" in PIL.__version__  # Pillow-SIMD versions are Pillow's + .postN
    print("peer: torch %s, torchvision %s, PIL %s (%s), libjpeg %s%s at %s" % (
        torch.__version__, torchvision.__version__, PIL.__version__,
        "Pillow-SIMD" if simd else "Pillow, no SIMD resample", features.version("jpg"),
        " (turbo)" if features.check_feature("libjpeg_turbo") else "", loaded_lib("libjpeg")))


def check(args):
    """Mean |difference| in 8-bit levels between the crop decoded at the
    window's reduction and the same window from the full decode, and
    between that and stock torchvision (integer crop, then resize)."""
    import numpy as np
    torch.manual_seed(1)
    ds = Folder(args.root, args.list, args.crop, "draft")
    counts, d_draft, d_stock, n, dlg_38 = {}, 0.0, 0.0, 0, 0
    for path, _ in ds.items[:args.check]:
        with open(path, "rb") as f:
            full = Image.open(f).convert("RGB")
            top, left, h, w = T.RandomResizedCrop.get_params(full, list(SCALE), list(RATIO))
            d = pick_reduction(w, h, args.crop)
            counts[d] = counts.get(d, 0) + 1
            # dlgauge's 3/8, which PIL's draft lacks
            dlg_38 += d == 2 and min(w, h) * 3 / 8 >= args.crop
            f.seek(0)
            drafted = np.asarray(draft_resized_crop(Image.open(f), top, left, h, w, args.crop),
                                 dtype=np.float64)
        exact = np.asarray(full.resize((args.crop, args.crop), Image.BILINEAR,
                                       box=(left, top, left + w, top + h)), dtype=np.float64)
        stock = np.asarray(T.functional.resized_crop(full, top, left, h, w, [args.crop] * 2),
                           dtype=np.float64)
        d_draft += np.abs(drafted - exact).mean()
        d_stock += np.abs(stock - exact).mean()
        n += 1
    mix = ", ".join("1/%d: %d" % (d, counts[d]) for d in sorted(counts))
    print("check: %d crops of %d, decoded at %s (dlgauge: %d of the 1/2 at 3/8); mean "
          "|draft - full| %.2f levels, |stock torchvision - full| %.2f levels"
          % (n, args.crop, mix, dlg_38, d_draft / max(n, 1), d_stock / max(n, 1)))


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("root", nargs="?")
    p.add_argument("list", nargs="?")
    p.add_argument("workers", nargs="?", type=int)
    p.add_argument("batches", nargs="?", type=int)
    p.add_argument("--crop", type=int, default=224)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--decode", choices=("draft", "full"), default="draft")
    p.add_argument("--about", action="store_true")
    p.add_argument("--check", type=int, metavar="N")
    a = p.parse_args(argv)
    if not a.about and (a.list is None or (a.check is None and a.batches is None)):
        p.error("give ROOT LIST WORKERS BATCHES, ROOT LIST --check N, or --about")
    return a


def main():
    args = parse(sys.argv[1:])
    if args.about:
        about()
    elif args.check is not None:
        check(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
