#!/usr/bin/env python3
"""A reference CNN computes the same function as its PyTorch model.

    torch_parity.py DUMP MODEL CROP BATCH WORKDIR [--backend B] [--steps N] [--floor N]

DUMP (torch_parity_dump, built from torch_parity_dump.c) builds MODEL at
CROP x CROP for BATCH images, draws its parameters, images and labels,
and writes them with what the engine computed (see that file).  This
loads the same values into the PyTorch model of that architecture, in
float64, and compares:
  - forward (default): the main logits and loss of an inference plan;
    max |engine - torch| / max |torch| must stay below --tol (1e-4);
  - --steps N: N SGD steps of a training plan under Caffe's rules,
    h = m h + lr lr_mult (g + wd decay_mult w), w -= h, with weights
    lr_mult 1 / decay_mult 1, biases 2 / 0, batch norm's gamma and beta
    1 / 0.  Nets with dropout train in test mode (dropout off, batch norm
    on running statistics; torch's eval()), ResNet-50 in train mode.  Each
    step starts from the engine's weights before it, torch keeping its own
    momentum history; per role, |engine - torch| / |torch's update| (L2
    norms) must stay below --tol (2e-3), and so must each step's loss,
    relative.  Defaults: lr 1e-3 (an update a few percent of the weights),
    weight decay 0.5 (so that decay is 5-20% of a weight's update and a
    decay_mult wrongly 1 or 0 shows), images of standard deviation 1 (at
    50 the loss starts near 350, the softmax saturated).

The tolerances: the engine computes in float32 (unit roundoff 6e-8), and
its error against the float64 model grows with the length of its dot
products and the depth: measured 4e-7 .. 1.5e-6 on the forwards here.
A real difference in the function (a layer's padding, pooling rounding,
LRN constants, batch norm's epsilon, a flatten order, a missing bias)
moves the figure to 1e-3 and above.  A gradient is not continuous: where
float32 rounding puts a ReLU input or a max-pool's pick on the other side
of a tie than float64 does, a whole position's gradient moves.  Norms
rather than maxima, and each step from the same weights, keep that to
1e-5 .. 2e-4 of the update for GoogLeNet (AVX-512 and AVX2 kernels); a
wrong lr_mult, decay or momentum, or aux loss weight, is 1e-2 and more.
ResNet-50 in train mode at small crops and batches is worse conditioned:
there torch's own float32 gradient is 2% off its float64 one, and a 1e-6
change to the images moves it 2-4%, so a fixed tolerance cannot judge it.
--floor N judges it by that change instead (the largest of N draws): the
engine's error must stay within --floor-ratio (4) times it, and the
engine's update must point where torch's does, its projection on torch's
within 2% (measured 0.9-1.0 times the floor and within 0.2%; a gamma
lr_mult 5% off gives a projection of 0.953).

Models: BVLC AlexNet and GoogLeNet are scripts/bench's bvlc_alexnet.py
and bvlc_googlenet.py (GoogLeNet-aux adds BVLC train_val's two auxiliary
heads, loss weight 0.3); resnet50, vgg16 and inception-v3 (aux_logits
off) are torchvision's.  For the forward the Caffe nets take
mean-subtracted pixels, standard deviation 50 here (so that LRN's alpha
term weighs), torchvision's normalised images, standard deviation 1.

Exit 77 (a skip under ctest) when torch or torchvision cannot be imported.
"""
import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import numpy as np
    import torch
    import torchvision
except ImportError as e:
    print(f"torch_parity: skipped, no PyTorch here: {e}")
    sys.exit(77)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "bench"))
from bvlc_alexnet import bvlc_alexnet  # noqa: E402
from bvlc_googlenet import bvlc_googlenet  # noqa: E402

# input standard deviation: Caffe's nets take pixels minus the mean
INPUT_SCALE = {"alexnet": 50.0, "googlenet": 50.0, "googlenet-aux": 50.0}
AUX_WEIGHT = {"googlenet-aux": 0.3}
# trained in train mode (batch norm on batch statistics): the nets without
# dropout, whose masks torch could not draw as the engine does; the others
# train in test mode
NO_DROPOUT = {"resnet50"}


class AuxHead(torch.nn.Module):
    """One of BVLC GoogLeNet's auxiliary classifiers (train_val's loss1, loss2)."""

    def __init__(self, cin, classes):
        super().__init__()
        self.pool = torch.nn.AvgPool2d(5, 3, ceil_mode=True)
        self.conv = torch.nn.Conv2d(cin, 128, 1)
        self.fc = torch.nn.Linear(128 * 4 * 4, 1024)
        self.drop = torch.nn.Dropout(0.7)
        self.classifier = torch.nn.Linear(1024, classes)

    def forward(self, x):
        x = torch.relu(self.conv(self.pool(x))).flatten(1)
        return self.classifier(self.drop(torch.relu(self.fc(x))))


class GoogLeNetAux(torch.nn.Module):
    """BVLC GoogLeNet with the heads after inception_4a and 4d; the parts are
    registered in the engine's layer order (each head after its module)."""

    def __init__(self, classes):
        super().__init__()
        body = bvlc_googlenet(classes)
        inc = [i for i, m in enumerate(body) if type(m).__name__ == "Inception"]
        a, d = inc[2] + 1, inc[5] + 1  # after inception_4a, after 4d
        self.to_4a, self.aux1 = body[:a], AuxHead(512, classes)
        self.to_4d, self.aux2 = body[a:d], AuxHead(528, classes)
        self.rest = body[d:]

    def forward(self, x):
        x = self.to_4a(x)
        a1 = self.aux1(x)
        x = self.to_4d(x)
        a2 = self.aux2(x)
        return self.rest(x), [a1, a2]


def vgg16(classes, crop):
    """torchvision's VGG16.  Away from 224 its adaptive pool would resize
    conv5's map to 7x7; the engine's (Caffe's) fc6 takes the map as it is,
    as torchvision's does at 224, so the pool goes and fc6 fits the map."""
    m = torchvision.models.vgg16(num_classes=classes)
    if crop != 224:
        side = -(-crop // 32)
        m.avgpool = torch.nn.Identity()
        m.classifier[0] = torch.nn.Linear(512 * side * side, 4096)
    return m


def reference(model, crop, classes):
    if model == "alexnet":
        return bvlc_alexnet(classes)
    if model == "googlenet":
        return bvlc_googlenet(classes)
    if model == "googlenet-aux":
        return GoogLeNetAux(classes)
    if model == "resnet50":
        return torchvision.models.resnet50(num_classes=classes)
    if model == "vgg16":
        return vgg16(classes, crop)
    if model == "inception-v3":
        return torchvision.models.inception_v3(
            num_classes=classes, aux_logits=False, init_weights=False, transform_input=False)
    sys.exit(f"torch_parity: no reference for model '{model}'")


def tensors(m):
    """(role, tensor) in the engine's parameter order: module order, then
    weight, bias; batch norm's gamma, beta, running mean and variance."""
    out = []
    for mod in m.modules():
        if isinstance(mod, (torch.nn.Conv2d, torch.nn.Linear)):
            out.append(("weight", mod.weight))
            if mod.bias is not None:
                out.append(("bias", mod.bias))
        elif isinstance(mod, torch.nn.BatchNorm2d):
            out += [("gamma", mod.weight), ("beta", mod.bias),
                    ("mean", mod.running_mean), ("var", mod.running_var)]
    return out


def read_manifest(d):
    rows = []
    for line in (d / "params.txt").read_text().splitlines():
        layer, index, role, shape, count = line.split("\t")
        rows.append((f"{layer}/{index}", role, shape, int(count)))
    return rows


def check_pairing(rows, ts):
    """The engine's parameter blobs and torch's tensors pair up in order."""
    if len(rows) != len(ts):
        sys.exit(f"torch_parity: the engine has {len(rows)} parameter blobs, torch {len(ts)}")
    for (name, role, shape, count), (trole, t) in zip(rows, ts):
        if role != trole or count != t.numel():
            sys.exit(f"torch_parity: {name} is {role} {shape}, torch has {trole} "
                     f"{'x'.join(map(str, t.shape))} there")


def load_params(ts, path):
    """A float32 file in params.txt's order into the tensors."""
    flat = np.fromfile(path, dtype=np.float32)
    if flat.size != sum(t.numel() for _, t in ts):
        sys.exit(f"torch_parity: {path} holds {flat.size} values, params.txt more or fewer")
    off = 0
    with torch.no_grad():
        for _, t in ts:
            t.copy_(torch.from_numpy(flat[off:off + t.numel()]).view(t.shape))
            off += t.numel()


def read_f32(path, *shape):
    return torch.from_numpy(np.fromfile(path, dtype=np.float32)).double().view(*shape)


def read_losses(d):
    return [float(v) for v in (d / "loss.txt").read_text().split()]


def losses(out, y, model):
    """The main loss, and the one backward trains on (the auxiliary heads' weighted in)."""
    ce = torch.nn.functional.cross_entropy
    if isinstance(out, tuple):
        main, aux = out
        lm = ce(main, y)
        return lm, lm + AUX_WEIGHT[model] * sum(ce(a, y) for a in aux)
    lm = ce(out, y)
    return lm, lm


def compare_forward(m, d, a):
    x = read_f32(d / "input.f32", a.batch, 3, a.crop, a.crop)
    y = read_f32(d / "labels.f32", a.batch).long()
    with torch.no_grad():
        out = m(x)
        ref = out[0] if isinstance(out, tuple) else out
        loss = losses(out, y, a.model)[0].item()
    mine = read_f32(d / "logits.f32", *ref.shape)
    rel = ((mine - ref).abs().max() / ref.abs().max()).item()
    mine_loss = read_losses(d)[0]
    rel_loss = abs(mine_loss - loss) / max(1.0, abs(loss))
    print(f"{a.model} crop {a.crop} batch {a.batch} {a.backend} forward: max|logit| "
          f"{ref.abs().max().item():.4g}, max relative error {rel:.3g}; loss {mine_loss:.6g} "
          f"(torch {loss:.6g}, relative error {rel_loss:.3g}); tolerance {a.tol:g}")
    return rel <= a.tol and rel_loss <= a.tol


# Caffe's lr_mult, decay_mult by role (the rest is state, not trained)
CAFFE_MULT = {"weight": (1.0, 1.0), "bias": (2.0, 0.0), "gamma": (1.0, 0.0), "beta": (1.0, 0.0)}


def caffe_sgd(ts, history, lr, mom, wd):
    """One update of Caffe's SGD with its lr_mult and decay_mult by role."""
    mult = CAFFE_MULT
    with torch.no_grad():
        for i, (role, t) in enumerate(ts):
            if role not in mult:  # running statistics: state, not trained
                continue
            lm, dm = mult[role]
            history[i].mul_(mom).add_(lr * lm * (t.grad + wd * dm * t))
            t.sub_(history[i])


def torch_step(m, ts, x, y, a, history, start):
    """One Caffe SGD step of torch from the weights in file start: the
    weights after it and the step's main loss (history is updated)."""
    load_params(ts, start)
    m.zero_grad()
    main, total = losses(m(x), y, a.model)
    total.backward()
    caffe_sgd(ts, history, a.lr, a.momentum, a.weight_decay)
    return [t.detach().clone() for _, t in ts], main.item()


def floor_by_role(m, ts, x, y, a, history, start, after):
    """How far torch's own float64 update moves, per trained role, when the
    images change by a relative 1e-6 (the largest of --floor draws): how
    well conditioned the step is, the scale an engine error is judged by
    (ResNet-50 in train mode at small crops: a few percent)."""
    gen = torch.Generator().manual_seed(1)
    worst = {}
    for _ in range(a.floor):
        xp = x * (1 + 1e-6 * torch.randn(x.shape, generator=gen, dtype=x.dtype))
        moved, _ = torch_step(m, ts, xp, y, a, [h.clone() for h in history], start)
        sums = {}
        for (role, _), t1, tp in zip(ts, after, moved):
            sums[role] = sums.get(role, 0.0) + ((tp - t1) ** 2).sum().item()
        for role, v in sums.items():
            worst[role] = max(worst.get(role, 0.0), v ** 0.5)
    return worst


def compare_train(m, d, a, ts):
    """Each step from the engine's weights before it (so that a ReLU or a
    max-pool choice that float32 rounding flips in one step does not carry
    into the next and grow), with torch's own momentum history.  With
    --floor, a trained role's error must stay within --floor-ratio times
    what a 1e-6 change of the images moves torch's own update, and the
    engine's update must point where torch's does (projection within 2%:
    a missing term or a wrong multiplier is off by O(1))."""
    x = read_f32(d / "input.f32", a.batch, 3, a.crop, a.crop)
    y = read_f32(d / "labels.f32", a.batch).long()
    history = [torch.zeros_like(t) for _, t in ts]
    engine_losses, ok = read_losses(d), True
    for s in range(1, a.steps + 1):
        start = d / (f"step{s - 1}.f32" if s > 1 else "params.f32")
        load_params(ts, start)
        before = [t.detach().clone() for _, t in ts]
        kept = [h.clone() for h in history]  # the step's own, for the floor's draws
        after, ref = torch_step(m, ts, x, y, a, history, start)
        floor = floor_by_role(m, ts, x, y, a, kept, start, after) if a.floor else None
        load_params(ts, d / f"step{s}.f32")
        sums = {}  # role: squared error, squared update, engine update . torch update
        for (role, t), t0, t1 in zip(ts, before, after):
            e, u, dot = sums.get(role, (0.0, 0.0, 0.0))
            sums[role] = (e + ((t - t1) ** 2).sum().item(), u + ((t1 - t0) ** 2).sum().item(),
                          dot + ((t - t0) * (t1 - t0)).sum().item())
        for role, (e, u, dot) in sums.items():
            if u == 0:
                continue  # running statistics in test mode: unchanged on both sides
            rel = (e / u) ** 0.5
            if floor and floor.get(role) and role in CAFFE_MULT:
                ratio, proj = e ** 0.5 / floor[role], dot / u
                ok &= ratio <= a.floor_ratio and abs(proj - 1) <= 0.02
                print(f"{a.model} step {s} {role}: |engine - torch| / |update| {rel:.3g}, "
                      f"{ratio:.3g} x the 1e-6 floor ({floor[role] / u ** 0.5:.3g}), projection {proj:.5f}")
                continue
            ok &= rel <= a.tol
            print(f"{a.model} step {s} {role}: |engine - torch| / |update| {rel:.3g}")
        mine = engine_losses[s - 1]
        rel = abs(mine - ref) / max(1.0, abs(ref))
        ok &= rel <= a.tol
        print(f"{a.model} step {s} loss {mine:.6g} (torch {ref:.6g}, relative error {rel:.3g})")
    print(f"{a.model} crop {a.crop} batch {a.batch} {a.backend} training: tolerance {a.tol:g}"
          + (f", floor ratio {a.floor_ratio:g}" if a.floor else ""))
    return ok


def engine_only(a, d, t_dump):
    """--engine-only (the ASan build, whose checks are the sanitizers'): the
    dump's parameter files hold as many values as its manifest lists, its
    logits and losses as many as the batch and steps give, all finite."""
    want = sum(r[3] for r in read_manifest(d))
    files = [(d / "params.f32", want)] + [(d / f"step{s}.f32", want) for s in range(1, a.steps + 1)]
    if not a.steps:
        files.append((d / "logits.f32", a.batch * a.classes))
    ok = True
    for f, n in files:
        v = np.fromfile(f, dtype=np.float32)
        finite = bool(np.isfinite(v).all())
        if v.size != n or not finite:
            print(f"torch_parity: {f.name}: {v.size} values, want {n}, all finite: {finite}")
            ok = False
    loss = read_losses(d)
    if len(loss) != max(1, a.steps) or not all(np.isfinite(loss)):
        print(f"torch_parity: loss.txt: {loss}, want {max(1, a.steps)} finite values")
        ok = False
    print(f"{a.model} crop {a.crop} batch {a.batch} {a.backend}: the engine alone, {len(files)} files of "
          f"the manifest's sizes, finite, losses {loss} ({t_dump:.1f} s); PyTorch not run")
    return 0 if ok else 1


def run_dump(a, d):
    cmd = [a.dump, "-b", a.backend, "-x", str(a.input_scale)]
    if a.steps:
        cmd += ["-s", str(a.steps), "-l", str(a.lr), "-m", str(a.momentum),
                "-w", str(a.weight_decay)] + ([] if a.model in NO_DROPOUT else ["-e"])
    cmd += [a.model, str(a.crop), str(a.batch), str(a.classes), str(d)]
    t0 = time.monotonic()
    subprocess.run(cmd, check=True)
    return time.monotonic() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dump")
    p.add_argument("model")
    p.add_argument("crop", type=int)
    p.add_argument("batch", type=int)
    p.add_argument("workdir", help="where the dump goes (a temporary folder, removed after)")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--steps", type=int, default=0)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=0.5)
    p.add_argument("--input-scale", type=float, help="the images' standard deviation")
    p.add_argument("--tol", type=float)
    p.add_argument("--floor", type=int, default=0,
                   help="judge trained roles by N draws of a 1e-6 change of the images (ill-conditioned steps)")
    p.add_argument("--floor-ratio", type=float, default=4.0)
    p.add_argument("--keep", action="store_true", help="keep the dump")
    p.add_argument("--engine-only", action="store_true",
                   help="run the engine's side alone and check its files (the ASan build: the "
                        "comparison is the same in the plain build, the sanitizers' checks are not)")
    a = p.parse_args()
    if a.input_scale is None:
        a.input_scale = 1.0 if a.steps else INPUT_SCALE.get(a.model, 1.0)
    if a.tol is None:
        a.tol = 2e-3 if a.steps else 1e-4
    torch.set_num_threads(1)  # ctest runs two tests at once on two cores
    Path(a.workdir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=a.workdir, prefix=a.model + ".") as tmp:
        d = Path(tmp)
        t_dump = run_dump(a, d)
        if a.engine_only:
            return engine_only(a, d, t_dump)
        t0 = time.monotonic()
        m = reference(a.model, a.crop, a.classes).double()
        m.train(bool(a.steps) and a.model in NO_DROPOUT)
        ts = tensors(m)
        check_pairing(read_manifest(d), ts)
        load_params(ts, d / "params.f32")
        ok = compare_train(m, d, a, ts) if a.steps else compare_forward(m, d, a)
        print(f"time: engine {t_dump:.1f} s, torch {time.monotonic() - t0:.1f} s")
        if a.keep:
            keep = Path(a.workdir) / a.model
            subprocess.run(["rm", "-rf", str(keep)], check=True)
            d.rename(keep)
            d.mkdir()  # for TemporaryDirectory's cleanup
            print(f"dump kept in {keep}")
    if not ok:
        print("torch_parity: FAILED: the engine and PyTorch differ beyond the tolerance")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
