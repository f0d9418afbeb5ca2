"""Train the built-in GPT-2 on the Brown corpus (tokens from prep.py). CPU, PyTorch, fixed seeds.

  nohup nice -n 5 /usr/bin/python3 models/train/train.py --out models/train/runs/main \
      > models/train/runs/train.log 2>&1 &

Every batch is a deterministic function of (seed, step): random windows of T+1 tokens
from train.bin; dropout is seeded per step too, so a run resumed from a checkpoint
(--resume) continues exactly as if it had never stopped.
Writes <out>/log.csv (step, lr, train loss averaged since the last row, held-out loss,
elapsed seconds, tokens seen), <out>/ckpt.pt every --ckpt_every steps and at the end,
<out>/final.pt (model state + config) when done.
"""
import argparse
import csv
import json
import math
import os
import sys
import time

# Passive OpenMP waiting: with OpenBLAS's own thread pool under PyTorch's OpenMP pool on a shared
# 2-core machine, spinning OpenMP workers made a step 3x slower (4.4 s vs 1.45 s measured here).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import GPT2, Config  # noqa: E402


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--out", default=os.path.join(HERE, "runs", "main"))
    ap.add_argument("--n_layer", type=int, default=6)
    ap.add_argument("--n_head", type=int, default=4)
    ap.add_argument("--n_embd", type=int, default=128)
    ap.add_argument("--n_positions", type=int, default=256)
    ap.add_argument("--block", type=int, default=256, help="training context length T")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=1600)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min_lr_frac", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--weight_decay", type=float, default=0.1)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--attn_dropout", type=float, default=0.0)
    ap.add_argument("--grad_clip", type=float, default=1.0)
    ap.add_argument("--eval_every", type=int, default=100)
    ap.add_argument("--eval_windows", type=int, default=40, help="held-out windows of T tokens per eval")
    ap.add_argument("--ckpt_every", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--shared_unseen", type=int, default=0,
                    help="1: ids absent from train.bin share one wte row (exact, cheaper head; see model.GPT2)")
    ap.add_argument("--stop_at", type=int, default=0, help="probe: stop after this many steps (schedule still --steps)")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--trial", type=int, default=0, help="time this many steps, print throughput, exit")
    return ap.parse_args()


def lr_at(step, a):
    if step < a.warmup:
        return a.lr * (step + 1) / a.warmup
    p = (step - a.warmup) / max(1, a.steps - a.warmup)
    return a.lr * (a.min_lr_frac + (1 - a.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * min(1.0, p))))


def get_batch(data, step, a):
    rng = np.random.default_rng([a.seed, step])
    ix = rng.integers(0, len(data) - a.block - 1, size=a.batch)
    x = np.stack([data[i:i + a.block] for i in ix]).astype(np.int64)
    y = np.stack([data[i + 1:i + 1 + a.block] for i in ix]).astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(y)


@torch.no_grad()
def heldout_loss(model, held, a):
    """Mean next-token loss over the first eval_windows non-overlapping windows of held-out tokens."""
    model.eval()
    n = min(a.eval_windows, (len(held) - 1) // a.block)
    tot = 0.0
    for j in range(0, n, 8):
        idx = range(j, min(n, j + 8))
        x = torch.from_numpy(np.stack([held[i * a.block:(i + 1) * a.block] for i in idx]).astype(np.int64))
        y = torch.from_numpy(np.stack([held[i * a.block + 1:(i + 1) * a.block + 1] for i in idx]).astype(np.int64))
        _, loss, _ = model(x, y)
        tot += loss.item() * len(idx)
    model.train()
    return tot / n


def main():
    a = get_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    os.makedirs(a.out, exist_ok=True)
    train = np.fromfile(os.path.join(a.data, "train.bin"), dtype="<u2")
    held = np.fromfile(os.path.join(a.data, "heldout.bin"), dtype="<u2")
    seen = np.unique(train).astype(np.int64) if a.shared_unseen else None
    cfg = Config(n_positions=a.n_positions, n_embd=a.n_embd, n_layer=a.n_layer, n_head=a.n_head, dropout=a.dropout,
                 attn_dropout=a.attn_dropout, n_seen=len(seen) if a.shared_unseen else 0)
    assert a.block <= cfg.n_positions and cfg.n_embd % cfg.n_head == 0
    model = GPT2(cfg, seen_ids=seen)
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    step0, elapsed0 = 0, 0.0
    ckpt_path = os.path.join(a.out, "ckpt.pt")
    log_path = os.path.join(a.out, "log.csv")
    if a.resume and os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step0, elapsed0 = ck["step"], ck["elapsed"]
        with open(log_path) as f:  # drop log rows written after the checkpoint
            rows = list(csv.reader(f))
        with open(log_path, "w", newline="") as f:
            csv.writer(f).writerows([rows[0]] + [r for r in rows[1:] if int(r[0]) <= step0])
        print(f"resumed at step {step0}", flush=True)
    elif not a.trial:
        with open(log_path, "w", newline="") as f:
            csv.writer(f).writerow(["step", "lr", "train_loss", "heldout_loss", "elapsed_s", "tokens"])
        with open(os.path.join(a.out, "args.json"), "w") as f:
            json.dump(vars(a), f, indent=1)
    print(f"wte rows {model.wte.weight.shape[0]}  params {n_params}  train tokens {len(train)}  heldout tokens {len(held)}  "
          f"tokens/step {a.batch * a.block}  threads {torch.get_num_threads()}", flush=True)

    t_start = time.time() - elapsed0
    acc, acc_n = 0.0, 0
    model.train()
    last = a.trial if a.trial else (a.stop_at or a.steps)
    for step in range(step0, last):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a)
        torch.manual_seed(a.seed * 1_000_003 + step)  # dropout masks: a function of the step
        x, y = get_batch(train, step, a)
        _, loss, _ = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
        opt.step()
        acc += loss.item()
        acc_n += 1
        if a.trial:
            if step == 1:
                t1 = time.time()
            print(f"step {step} loss {loss.item():.4f} {time.time() - t_start:.1f}s", flush=True)
            continue
        done = step + 1
        if done % a.eval_every == 0 or done == a.steps:
            hl = heldout_loss(model, held, a)
            el = time.time() - t_start
            with open(log_path, "a", newline="") as f:
                csv.writer(f).writerow([done, f"{lr_at(step, a):.6g}", f"{acc / acc_n:.5f}", f"{hl:.5f}",
                                        f"{el:.1f}", done * a.batch * a.block])
            print(f"step {done}/{a.steps} train {acc / acc_n:.4f} heldout {hl:.4f} ppl {math.exp(hl):.1f} "
                  f"{el:.0f}s", flush=True)
            acc, acc_n = 0.0, 0
        if done % a.ckpt_every == 0 or done == a.steps:
            tmp = ckpt_path + ".tmp"
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": done,
                        "elapsed": time.time() - t_start, "config": cfg.to_dict()}, tmp)
            os.replace(tmp, ckpt_path)
    if a.trial:
        dt = (time.time() - t1) / (a.trial - 2)
        print(f"TRIAL {dt:.3f} s/step  {a.batch * a.block / dt:.0f} tokens/s", flush=True)
        t = time.time(); hl = heldout_loss(model, held, a)
        print(f"eval of {a.eval_windows} windows: {time.time() - t:.1f}s loss {hl:.3f}", flush=True)
        return
    if last < a.steps:  # --stop_at probe: not a finished model
        print(f"STOPPED at step {last} of {a.steps} in {time.time() - t_start:.0f}s", flush=True)
        return
    torch.save({"model": model.state_dict(), "config": cfg.to_dict(), "steps": a.steps,
                "elapsed": time.time() - t_start, "args": vars(a)}, os.path.join(a.out, "final.pt"))
    print(f"DONE {a.steps} steps in {time.time() - t_start:.0f}s", flush=True)


if __name__ == "__main__":
    main()
