#!/usr/bin/python3
"""PyTorch peer of the mxnet workloads (scripts/bench/mxnet-vs-pytorch.sh).

mxnet_peer.py inception MODE BATCH THREADS STEPS FORMAT
    torchvision inception_v3 (no aux head), 299x299 synthetic input,
    FORMAT nchw|cl; SGD lr 0.1 momentum 0.9 wd 1e-4.
mxnet_peer.py lstm MODE BATCH THREADS STEPS HIDDEN [VOCAB BPTT LAYERS] [FORMAT]
    PyTorch's word_language_model RNNModel equivalent: Embedding(V, H),
    dropout 0.2, nn.LSTM(H, H, LAYERS, dropout 0.2), dropout, Linear(H, V),
    CrossEntropyLoss over BPTT x BATCH tokens, hidden state carried and
    detached, clip_grad_norm_(0.25), plain SGD lr 20 (the example's loop).
    FORMAT fp32 (default) | amp: autocast to bfloat16 around the forward,
    fp32 master weights and gradients (PyTorch 1.13's CPU autocast casts
    the decoder's Linear but leaves nn.LSTM in fp32: see lstm_dtype) |
    bf16: the model and state converted to bfloat16 (the LSTM in bf16, but
    bf16 weights, gradients and SGD); the loss in fp32 either way.
Two warm-up steps, then STEPS timed steps; one JSON line: median step
seconds, items/s, peak RSS bytes, BLAS (the LSTM's and the FC layers'
GEMMs run in OpenBLAS).
"""
import json
import resource
import statistics
import sys
import time

import torch

from blas_info import blas_info


def timed(step, steps):
    for _ in range(2):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def inception(mode, batch, steps, fmt, precision="fp32"):
    """fmt nchw|cl|frozen|amp|ampn; precision bf16 (inference): the model
    and input in bfloat16 (frozen bf16 is channels_last), or amp: autocast
    on the fp32 channels_last model (ampn: nchw).  bf16 training: amp or
    ampn only (fp32 master weights, as dlgauge's cpu-bf16 trains)."""
    import torchvision
    model = torchvision.models.inception_v3(aux_logits=False, init_weights=False, num_classes=1000)
    x = torch.randn(batch, 3, 299, 299)
    y = torch.randint(0, 1000, (batch,))
    bf16 = precision == "bf16"
    amp = fmt in ("amp", "ampn")
    if bf16 and mode == "train" and not amp:
        sys.exit("bf16 training is measured with autocast (amp, ampn): fp32 master weights")
    if bf16 and not amp:
        model, x = model.to(torch.bfloat16), x.to(torch.bfloat16)
    if fmt in ("cl", "amp") or (bf16 and fmt == "frozen"):
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    train = mode == "train"
    model.train(train)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    if fmt == "frozen":  # inference only: scripted, frozen, batch norm folded
        if train:
            sys.exit("frozen is an inference format")
        model = torch.jit.optimize_for_inference(torch.jit.script(model.eval()))

    def step():
        if train:
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
                loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        else:
            with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
                out = model(x)  # scripted: InceptionOutputs (logits, aux)
                out = out[0] if isinstance(out, tuple) else out
                loss_fn(out.float(), y)

    return timed(step, steps), batch


class RNNModel(torch.nn.Module):
    def __init__(self, V, H, layers, dropout):
        super().__init__()
        self.drop = torch.nn.Dropout(dropout)
        self.encoder = torch.nn.Embedding(V, H)
        self.rnn = torch.nn.LSTM(H, H, layers, dropout=dropout)
        self.decoder = torch.nn.Linear(H, V)
        torch.nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        torch.nn.init.zeros_(self.decoder.bias)
        torch.nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
        return self.decoder(self.drop(out)).view(-1, self.decoder.out_features), hidden


def lstm(mode, batch, steps, H, V, T, layers, fmt="fp32"):
    if fmt not in ("fp32", "amp", "bf16"):
        sys.exit(f"lstm format {fmt!r}: expected fp32, amp or bf16")
    dt = torch.bfloat16 if fmt == "bf16" else torch.float32
    model = RNNModel(V, H, layers, 0.2).to(dt)
    train = mode == "train"
    model.train(train)
    data = torch.randint(0, V, (T + 1, batch))
    x, y = data[:T], data[1:].reshape(-1)
    hidden = [(torch.zeros(layers, batch, H, dtype=dt), torch.zeros(layers, batch, H, dtype=dt))]
    loss_fn = torch.nn.CrossEntropyLoss()
    seen = {}

    def forward(h):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=fmt == "amp"):
            out, hid = model(x, h)
            seen["lstm_dtype"] = str(hid[0].dtype).replace("torch.", "")
        return out.float(), hid

    def step():
        h = tuple(t.detach() for t in hidden[0])
        if train:
            model.zero_grad()
            out, hidden[0] = forward(h)
            loss_fn(out, y).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(p.grad, alpha=-20.0)
        else:
            with torch.inference_mode():
                out, hidden[0] = forward(h)
                loss_fn(out, y)

    return timed(step, steps), T * batch, seen


def main():
    kind, mode, batch, threads, steps = sys.argv[1:6]
    batch, threads, steps = int(batch), int(threads), int(steps)
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    extra = {}
    if kind == "inception":
        med, items = inception(mode, batch, steps, *sys.argv[6:8])
    else:
        rest = [int(a) for a in sys.argv[6:] if a.isdigit()]
        fmt = [a for a in sys.argv[6:] if not a.isdigit()]
        H, V, T, layers = (rest + [10000, 35, 2][len(rest) - 1:])[:4]
        med, items, extra = lstm(mode, batch, steps, H, V, T, layers, *fmt[:1])
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = {"median_s": med, "items_per_s": items / med, "rss_peak_bytes": rss,
           "torch": torch.__version__, "threads": torch.get_num_threads(), **extra}
    out.update(blas_info())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
