"""GPT-2 in plain PyTorch, parameter for parameter the same as Hugging Face GPT2LMHeadModel:
pre-LN blocks, gelu_new (tanh approximation), learned position embeddings, LM head tied to wte.
Linear layers are stored as nn.Linear (out x in); export.py transposes them to HF's Conv1D (in x out).
Shapes: B batch, T time, C n_embd, NH heads, HS = C / NH, V vocab.
"""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab_size: int = 50257
    n_positions: int = 256
    n_embd: int = 128
    n_layer: int = 6
    n_head: int = 4
    dropout: float = 0.1        # embd_pdrop = resid_pdrop (embeddings, residual branches, MLP)
    attn_dropout: float = 0.0   # attn_pdrop (0: the (B, NH, T, T) dropout mask costs ~15% of a CPU step)
    n_seen: int = 0             # > 0: only n_seen ids have their own wte row, all others share one (see GPT2)
    layer_norm_epsilon: float = 1e-5

    def to_dict(self):
        return asdict(self)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class TiedHeadLoss(torch.autograd.Function):
    """Mean cross-entropy of logits = x @ W^T, computed in row chunks with the softmax gradient
    formed in place (saves the separate log_softmax backward pass over the (N, V) logits).
    x (N, C), W (V, C), targets (N,) -> scalar. Same value and gradients as
    F.cross_entropy(x @ W.t(), targets)."""

    @staticmethod
    def forward(ctx, x, W, targets, bias=None):
        N, V = x.shape[0], W.shape[0]
        G = torch.empty(N, V, dtype=x.dtype)                          # (N, V): softmax - onehot
        total = x.new_zeros(())
        for r0 in range(0, N, 512):
            r1 = min(N, r0 + 512)
            g = G[r0:r1]
            torch.mm(x[r0:r1], W.t(), out=g)
            if bias is not None:
                g.add_(bias)
            g.sub_(g.max(dim=1, keepdim=True).values)
            t = targets[r0:r1].view(-1, 1)
            tl = g.gather(1, t)
            g.exp_()
            s = g.sum(dim=1, keepdim=True)
            total += (s.log() - tl).sum()
            g.div_(s)
            g.scatter_add_(1, t, torch.full_like(tl, -1.0))
        ctx.save_for_backward(x, W, G)
        return total / N

    @staticmethod
    def backward(ctx, go):
        x, W, G = ctx.saved_tensors
        scale = go / x.shape[0]
        return (G @ W) * scale, (G.t() @ x) * scale, None, None


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.nh = cfg.n_head
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.attn_drop = nn.Dropout(cfg.attn_dropout)
        self.resid_drop = nn.Dropout(cfg.dropout)
        mask = torch.tril(torch.ones(cfg.n_positions, cfg.n_positions, dtype=torch.bool))
        self.register_buffer("mask", mask.view(1, 1, cfg.n_positions, cfg.n_positions), persistent=False)
        self.keep_heads = False                                       # True: keep the heads' outputs (pre c_proj)
        self.ablate = ()                                              # heads whose output is zeroed (train.py's probe)

    def forward(self, x, return_att=False):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)                     # (B, T, C) each
        hs = C // self.nh
        q = q.view(B, T, self.nh, hs).transpose(1, 2)                 # (B, NH, T, HS)
        k = k.view(B, T, self.nh, hs).transpose(1, 2)
        v = v.view(B, T, self.nh, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))       # (B, NH, T, T)
        att = att.masked_fill(~self.mask[:, :, :T, :T], float("-inf"))
        att = F.softmax(att, dim=-1)
        probs = att
        att = self.attn_drop(att)
        if self.ablate:                                               # the page's ablation: zero before c_proj
            keep = torch.ones(self.nh, 1, 1, dtype=v.dtype)
            keep[list(self.ablate)] = 0.0
            v = v * keep
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)      # (B, T, C)
        if self.keep_heads:                                           # train.py's copy teacher reads them
            self.heads_in, self.heads_out = x, y
        y = self.resid_drop(self.c_proj(y))
        return (y, probs) if return_att else (y, None)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.drop(self.c_proj(gelu_new(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.attn = Attention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.mlp = MLP(cfg)

    def forward(self, x, return_att=False):
        if self.attn.keep_heads:                                      # train.py's circuit teacher reads it
            self.x_in = x
        a, att = self.attn(self.ln_1(x), return_att)
        x = x + a
        x = x + self.mlp(self.ln_2(x))
        return x, att


class GPT2(nn.Module):
    """With cfg.n_seen > 0 ("shared unseen row"): the ids that never occur in the training text
    (they get no input and no target signal) all share ONE embedding row, so wte is stored as
    (n_seen + 1, C) and id_map sends every id to its row. This is exactly the full-vocabulary
    GPT-2 with those rows tied together: the shared row's logit enters the softmax with weight
    n_unseen (a +log(n_unseen) bias), and an unseen target gets -log(n_unseen) back. It only
    saves the (V - n_seen) identical columns of the tied head (about 35% of the head's work on
    Brown). export.py writes the full (V, C) matrix, wte[id] = row[id_map[id]]."""

    def __init__(self, cfg, seen_ids=None):
        super().__init__()
        self.cfg = cfg
        if cfg.n_seen:
            V, S = cfg.vocab_size, cfg.n_seen
            id_map = torch.full((V,), S, dtype=torch.long)
            if seen_ids is not None:
                assert len(seen_ids) == S
                id_map[torch.as_tensor(seen_ids, dtype=torch.long)] = torch.arange(S)
            self.register_buffer("id_map", id_map)                    # (V,) id -> row
            bias = torch.zeros(S + 1)
            bias[S] = math.log(V - S)
            self.register_buffer("head_bias", bias, persistent=False)  # (S+1,)
            self.wte = nn.Embedding(S + 1, cfg.n_embd)
        else:
            self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.n_positions, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.keep_resid = False                                       # True: keep the residual entering ln_f
        self.apply(self._init)
        # GPT-2: residual projections scaled by 1/sqrt(2 * n_layer)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def trunk(self, idx, return_att=False):
        """The residual stream entering ln_f (B, T, C), and each layer's attention if asked."""
        B, T = idx.shape
        assert T <= self.cfg.n_positions
        pos = torch.arange(T, device=idx.device)
        rows = self.id_map[idx] if self.cfg.n_seen else idx
        x = self.drop(self.wte(rows) + self.wpe(pos))                 # (B, T, C)
        atts = []
        for blk in self.h:
            x, att = blk(x, return_att)
            atts.append(att)
        return x, atts

    def forward(self, idx, targets=None, return_att=False):
        B, T = idx.shape
        shared = bool(self.cfg.n_seen)
        x, atts = self.trunk(idx, return_att)
        if self.keep_resid:                                           # train.py's copy teacher reads it
            self.resid = x
        x = self.ln_f(x)
        if targets is not None:                                       # training / eval: loss only
            t = targets.reshape(-1)
            xf = x.reshape(B * T, -1)
            keep = t >= 0                                             # targets < 0 are not scored
            if not bool(keep.all()):
                xf, t = xf[keep], t[keep]
            if shared:
                t = self.id_map[t]
                loss = TiedHeadLoss.apply(xf, self.wte.weight, t, self.head_bias)
                n_unseen_targets = (t == self.cfg.n_seen).sum()
                loss = loss + n_unseen_targets * self.head_bias[-1] / t.numel()
            else:
                loss = TiedHeadLoss.apply(xf, self.wte.weight, t)
            return None, loss, (atts if return_att else None)
        W = self.full_wte()
        logits = x @ W.t()                                            # (B, T, V), tied head
        return logits, None, (atts if return_att else None)

    def full_wte(self):
        """(V, C) token embedding as GPT-2 stores it."""
        return self.wte.weight[self.id_map] if self.cfg.n_seen else self.wte.weight
