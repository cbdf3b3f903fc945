"""PyTorch's word language model on the GPU, for gpu-bench-torch.py.

The PTB-medium LSTM as dlgauge's lstm-ptb runs it (and as the CPU peer
scripts/bench/mxnet_peer.py does): Embedding(10000, 650), dropout 0.2,
nn.LSTM(650, 650, 2 layers, dropout 0.2) on cuDNN, dropout,
Linear(650, 10000), CrossEntropyLoss over bptt 35 x batch tokens, hidden
state carried and detached between steps, clip_grad_norm_(0.25), plain SGD
lr 20 (torch.optim.SGD, momentum 0: the example's update, fused).  fp32 =
TF32 off, tf32 = TF32 on, bf16/fp16 = torch.autocast (fp16 with a
GradScaler).  Synthetic ids on the GPU, the same every step.
"""
import torch
import torch.nn as nn

V, H, LAYERS, BPTT = 10000, 650, 2, 35


class WordLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(V, H)
        self.rnn = nn.LSTM(H, H, LAYERS, dropout=0.2)
        self.decoder = nn.Linear(H, V)
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
        return self.decoder(self.drop(out)).view(-1, V), hidden


def lm_step_fn(mode, prec, batch):
    """The model's step as a closure (train: forward, backward, clipping,
    SGD; infer: forward), its state on the GPU."""
    tf32 = prec == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    amp = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec)
    dev = torch.device("cuda")
    model = WordLM().to(dev)
    data = torch.randint(0, V, (BPTT + 1, batch), device=dev)
    x, y = data[:BPTT], data[1:].reshape(-1)
    hidden = [(torch.zeros(LAYERS, batch, H, device=dev),
               torch.zeros(LAYERS, batch, H, device=dev))]
    crit = nn.CrossEntropyLoss()
    scaler = torch.amp.GradScaler("cuda", enabled=prec == "fp16")
    opt = torch.optim.SGD(model.parameters(), lr=20.0, momentum=0.0)

    def autocast():
        return torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None)

    if mode == "train":
        model.train()

        def step():
            h = tuple(t.detach() for t in hidden[0])
            opt.zero_grad(set_to_none=True)
            with autocast():
                out, hidden[0] = model(x, h)
                loss = crit(out.float(), y)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            scaler.step(opt)
            scaler.update()
    else:
        model.eval()

        def step():
            with torch.inference_mode(), autocast():
                out, hidden[0] = model(x, hidden[0])
                crit(out.float(), y)
    return step, model


def run_lm(mode, prec, batch, warmup, timed, energy_mj):
    """Times the step with CUDA events as gpu-bench-torch.py's run_case
    does; prints its line with tokens/s and J/token:
    torch PREC lstm-ptb MODE seq BATCH TOKENS_PER_S MS_PER_STEP J_PER_TOKEN"""
    step, model = lm_step_fn(mode, prec, batch)
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    e0 = energy_mj()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(timed):
        step()
    b.record()
    torch.cuda.synchronize()
    e1 = energy_mj()
    ms = a.elapsed_time(b) / timed
    tokens = BPTT * batch
    ej = "-" if e0 is None or e1 is None else "%.6f" % ((e1 - e0) / 1e3 / (tokens * timed))
    print("torch %s lstm-ptb %s seq %d %.1f %.3f %s" % (prec, mode, batch, tokens * 1e3 / ms,
                                                       ms, ej), flush=True)
    del model, step
    torch.cuda.empty_cache()
