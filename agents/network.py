"""The PyTorch network: one policy for all four seats (bids and card play), masked, with a
perfect-information critic used only in training.

The policy head sees only the seat's observation (``OBS_DIM`` floats) and its legal-action
mask (24 more inputs: what the seat may do is part of what it knows); the value head sees
the perfect-information view (``PERFECT_INFO_DIM``: the observation plus every hidden hand),
as PerfectDou does: the critic's extra knowledge lowers the variance of the advantages and
never reaches play, since acting needs only the policy.

With ``q_head=True`` the network also has an action-value head (``q(obs, mask)``: each
action's expected game points for the acting seat's team, from the seat's observation alone),
which a teacher–student run fits to its teacher's values; it is not part of the exported policy.
With ``dueling=True`` that head is a state value plus a *centred* advantage (each legal action's
advantage minus their mean), so the value absorbs the luck of the deal and the advantages only
what the choice changes. With ``owners=True`` a card-location head says, for each card the seat
cannot place, which of the other three seats holds it (``owners(obs, mask)``: (N, 20, 3) logits),
trained against the actual deal; neither is part of the exported policy.

With ``late_from_trick=k`` the policy has a second card-play head, ``late_net``, for the tricks
from ``k`` on (counting from 0; the trick read from the observation's trick leaders): the bids and
the earlier tricks are ``policy_net``'s, the later card play ``late_net``'s. The two never share a
gradient, so the late play can be taught by a search without moving the early play at all (a
mixture of two experts gated by the trick). ``late_hidden`` and ``late_layers`` give it its own size
(a late head of another depth than the policy head's starts fresh, to be fitted to stored labels:
:mod:`agents.training.distill`). ``k`` is kept in the state dict (``late_from_trick``)
and in the exported graph, so a model file says which head plays when. With ``early_head=True`` a
third head, ``early_net``, plays the card plays before the late head's trick (all of them without a
late head), so that ``policy_net`` only bids: the first tricks can then be taught without moving the
bids. A state dict holds ``early_net.*`` only when it has one.

``obs_dim`` is the width of the observation the network was built for (``OBS_DIM``, or that of
an earlier version in :data:`cuatrola_env.observation.OBS_DIMS`): every head reads that many
leading columns of the observation it is given, so a network of an earlier version plays on
today's observations (each version begins with the whole of the one before).
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from cuatrola_env.observation import OBS_DIM, OFFSETS
from cuatrola_env.rules import NUM_ACTIONS, NUM_CARDS, NUM_SEATS, NUM_TRICKS

OTHER_SEATS = 3  #: the card-location head's classes: the next seat, the partner, the seat before

MASKED_LOGIT = -1e9


def _mlp(inp: int, hidden: int, out: int, layers: int = 2) -> nn.Sequential:
    mods: list[nn.Module] = []
    size = inp
    for _ in range(layers):
        mods += [nn.Linear(size, hidden), nn.ReLU()]
        size = hidden
    mods.append(nn.Linear(size, out))
    return nn.Sequential(*mods)


#: the first layer of each head, and what its input holds after the observation
_FIRST_LAYERS = ("policy_net.0.weight", "early_net.0.weight", "late_net.0.weight",
                  "q_net.0.weight", "owner_net.0.weight", "value_net.0.weight")


def widen_inputs(state: dict, from_dim: int, to_dim: int = OBS_DIM) -> dict:
    """The weights of a network built for an observation of ``from_dim`` floats, for one of
    ``to_dim``: each head's first layer gains zero weights for the new columns (which come after
    the old ones and before the legal mask or the hidden hands), so the widened network computes
    exactly what the old one did and can learn to use the new columns."""
    if to_dim < from_dim:
        raise ValueError(f"an observation of {to_dim} floats cannot hold one of {from_dim}")
    out = dict(state)
    for key in _FIRST_LAYERS:
        if key in state:
            w = state[key]
            zeros = w.new_zeros(w.shape[0], to_dim - from_dim)
            out[key] = torch.cat([w[:, :from_dim], zeros, w[:, from_dim:]], dim=1)
    return out


#: the heads a state dict may hold, each an :func:`_mlp`
_HEADS = ("policy_net", "early_net", "late_net", "value_net", "q_net", "owner_net")


def widen_hidden(state: dict, hidden: int, noise: float = 1e-3, seed: int = 0) -> dict:
    """The weights of a network of the same depth with ``hidden`` units a layer (at least as many
    as now) that computes what this one does (Net2Net): each new unit copies a unit of its layer
    drawn at random, and the next layer splits that unit's outgoing weights among its copies. With
    ``noise`` > 0 each layer's incoming weights get that share of their spread as Gaussian noise, so
    that the copies can learn apart; the outputs then differ by about that share."""
    g = torch.Generator().manual_seed(seed)
    out = dict(state)
    for head in _HEADS:
        layers = sorted(int(k.split(".")[1]) for k in state if k.startswith(f"{head}.") and k.endswith(".weight"))
        src = None  # which old unit each unit of the previous layer copies
        for i, n in enumerate(layers):
            w, b = state[f"{head}.{n}.weight"], state[f"{head}.{n}.bias"]
            if src is not None:  # split each old input unit's weights among its copies
                w = w[:, src] / torch.bincount(src)[src].to(w.dtype)
            if i < len(layers) - 1:
                old = w.shape[0]
                if hidden < old:
                    raise ValueError(f"{head} has {old} units a layer; widening cannot make it {hidden}")
                src = torch.cat([torch.arange(old), torch.randint(0, old, (hidden - old,), generator=g)])
                w, b = w[src], b[src]
                if noise > 0:
                    w = w + noise * w.std() * torch.randn(w.shape, generator=g, dtype=w.dtype)
            out[f"{head}.{n}.weight"], out[f"{head}.{n}.bias"] = w, b
    return out


def merged_late_heads(states: list[dict]) -> dict:
    """The weights of one network whose late card-play head computes exactly the mean of the late
    heads' logits in ``states``: the heads side by side (the first layer's units stacked, each later
    hidden layer block-diagonal) and the output layer averaging them, so two heads of 256 units a
    layer make one of 512. The networks must share their policy head (the same bids and early play);
    the heads play does not use (action values, card locations, the critic) are the first one's.
    An ensemble of students of the same teacher in one graph."""
    if len(states) < 2:
        raise ValueError(f"merging late heads needs at least two networks, got {len(states)}")
    late = [k for k in states[0] if k.startswith("late_net.")]
    if not late:
        raise ValueError("the first network has no late card-play head (late_from_trick) to merge")
    for i, state in enumerate(states[1:], 2):
        if set(state) != set(states[0]):
            raise ValueError(f"network {i} has other parts than the first: {sorted(set(state) ^ set(states[0]))[:3]}")
        differ = next((k for k in state if k.startswith("policy_net.") or k == "late_from_trick"
                       if not torch.equal(state[k], states[0][k])), None)
        if differ is not None:
            raise ValueError(f"network {i} plays the bids or early tricks otherwise than the first ({differ}): only "
                             "networks with the same policy head and late trick can share one graph")
    layers = sorted(int(k.split(".")[1]) for k in late if k.endswith(".weight"))
    out = dict(states[0])
    for i, n in enumerate(layers):
        ws, bs = [s[f"late_net.{n}.weight"] for s in states], [s[f"late_net.{n}.bias"] for s in states]
        if i == 0:
            w, b = torch.cat(ws, 0), torch.cat(bs)
        elif i < len(layers) - 1:
            w, b = torch.block_diag(*ws), torch.cat(bs)
        else:
            w, b = torch.cat(ws, 1) / len(states), torch.stack(bs).mean(0)
        out[f"late_net.{n}.weight"], out[f"late_net.{n}.bias"] = w, b
    return out


@dataclasses.dataclass(frozen=True)
class NetworkSpec:
    """What a network is made of: every head and its size, and the observation it reads. Saved in
    every checkpoint (``"network"``) and model card and built again by :func:`build`; a network's
    heads are read from here, never guessed from a state dict's key names (files written before
    specs: :meth:`of_state`, the one reader of key names)."""

    hidden: int = 256  #: units of each hidden layer of the policy, critic, action-value and card-location heads
    layers: int = 2  #: hidden layers of those heads
    obs_dim: int = OBS_DIM  #: the observation's leading columns every head reads (an earlier version's width)
    q_head: bool = False  #: an action-value head (``q``), as a teacher–student run fits it
    dueling: bool = False  #: the action-value head as a state value plus centred advantages (implies ``q_head``)
    owners: bool = False  #: a card-location head (``owners``)
    late_from_trick: int | None = None  #: the trick from which a late card-play head plays (None: no such head)
    late_hidden: int | None = None  #: the late head's units a layer (None: ``hidden``)
    late_layers: int | None = None  #: the late head's hidden layers (None: ``layers``)
    early_head: bool = False  #: an early card-play head for the card plays before the late head's trick

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data) -> NetworkSpec:
        """The spec a checkpoint or card saved; :class:`ValueError` naming a field that does not fit."""
        if not isinstance(data, dict):
            raise ValueError(f"the network spec must be a dict of its fields, got {type(data).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ValueError(f"the network spec has unknown field(s) {unknown[:5]}")
        for name, value in data.items():
            kind = bool if isinstance(fields[name].default, bool) else int
            optional = fields[name].default is None
            if not (value is None and optional) and (type(value) is not kind or (kind is int and not 0 <= value <= 65536)):
                raise ValueError(f"the network spec's field {name} must be {'None or ' if optional else ''}"
                                 f"{'a boolean' if kind is bool else 'an integer in 0..65536'}, got {str(value)[:40]}")
        return cls(**data)

    @classmethod
    def of_state(cls, state: dict, hidden: int, layers: int, obs_dim: int = OBS_DIM) -> NetworkSpec:
        """The spec of a state dict saved before specs were (its heads read from its key names)."""
        q_out = state.get(f"q_net.{2 * layers}.bias")
        late = state.get("late_from_trick")
        late_hidden, late_layers = late_head_size(state)
        return cls(hidden, layers, obs_dim, q_head=q_out is not None,
                   dueling=q_out is not None and len(q_out) == NUM_ACTIONS + 1,
                   owners=any(k.startswith("owner_net.") for k in state),
                   late_from_trick=None if late is None else int(late), late_hidden=late_hidden,
                   late_layers=late_layers, early_head="early_net.0.weight" in state)


def build(spec: NetworkSpec) -> PolicyValueNet:
    """An untrained network of ``spec``."""
    return PolicyValueNet(**dataclasses.asdict(spec))


class PolicyValueNet(nn.Module):
    """``policy(obs, mask) -> masked logits``; ``value(obs, hidden_hands) -> value`` (training only).
    ``spec`` says what it is made of (:class:`NetworkSpec`)."""

    def __init__(self, hidden: int = 256, layers: int = 2, q_head: bool = False, dueling: bool = False,
                 owners: bool = False, obs_dim: int = OBS_DIM, late_from_trick: int | None = None,
                 late_hidden: int | None = None, early_head: bool = False, late_layers: int | None = None):
        super().__init__()
        if late_from_trick is not None and not 1 <= late_from_trick <= NUM_TRICKS - 1:
            raise ValueError(f"late_from_trick must be a trick from 1 to {NUM_TRICKS - 1}, got {late_from_trick}")
        late_hidden = hidden if late_hidden is None else late_hidden
        late_layers = layers if late_layers is None else late_layers
        if late_layers < 1:
            raise ValueError(f"late_layers must be at least 1, got {late_layers}")
        if late_hidden < hidden and late_layers == layers:
            raise ValueError(f"late_hidden must be at least hidden ({hidden}): the late head starts as a copy of "
                             f"the policy head, got {late_hidden}")
        self.hidden, self.layers, self.dueling, self.obs_dim = hidden, layers, dueling, obs_dim
        late = late_from_trick is not None
        self.spec = NetworkSpec(hidden, layers, obs_dim, q_head=q_head or dueling, dueling=dueling, owners=owners,
                                late_from_trick=late_from_trick, late_hidden=late_hidden if late else None,
                                late_layers=late_layers if late else None, early_head=early_head)
        inp = obs_dim + NUM_ACTIONS
        self.policy_net = _mlp(inp, hidden, NUM_ACTIONS, layers)
        self.value_net = _mlp(obs_dim + NUM_SEATS * NUM_CARDS, hidden, 1, layers)
        q_out = NUM_ACTIONS + 1 if dueling else NUM_ACTIONS  # dueling: 24 advantages, then the state value
        self.q_net = _mlp(inp, hidden, q_out, layers) if q_head or dueling else None
        self.owner_net = _mlp(inp, hidden, NUM_CARDS * OTHER_SEATS, layers) if owners else None
        with torch.no_grad():  # small initial logits: a near-uniform first policy
            self.policy_net[-1].weight.mul_(0.01)
            self.policy_net[-1].bias.zero_()
        self.late_net = None
        if late_from_trick is not None:
            self.late_net = _mlp(inp, late_hidden, NUM_ACTIONS, late_layers)
            self.register_buffer("late_from_trick", torch.tensor(late_from_trick, dtype=torch.int64))
        self.early_net = _mlp(inp, hidden, NUM_ACTIONS, layers) if early_head else None
        self.heads_from_policy(late=True, early=True)

    def heads_from_policy(self, late: bool, early: bool) -> None:
        """Start the card-play heads named as the policy head plays: the early head as its copy, the
        late head as its copy widened to the late head's units (a deeper late head stays as it is)."""
        if early and self.early_net is not None:
            self.early_net.load_state_dict(self.policy_net.state_dict())
        if late and self.late_net is not None and self.spec.late_layers == self.layers:
            policy = {f"policy_net.{k}": v for k, v in self.policy_net.state_dict().items()}
            start = widen_hidden(policy, self.spec.late_hidden, noise=0.0)
            self.late_net.load_state_dict({k.removeprefix("policy_net."): v for k, v in start.items()})

    def redraw_late_head(self, seed: int) -> None:
        """The late head's weights drawn afresh (PyTorch's default initialisation, from ``seed``; the
        global random streams untouched)."""
        if self.late_net is None:
            raise ValueError("this network has no late head to redraw")
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            for layer in self.late_net.modules():
                if isinstance(layer, nn.Linear):
                    layer.reset_parameters()

    @property
    def late_trick(self) -> int | None:
        """The trick from which ``late_net`` plays the cards (None: ``policy_net`` plays them all)."""
        return None if self.late_net is None else int(self.late_from_trick)

    def _inputs(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """What the policy, action-value and card-location heads read: the observation's leading
        ``obs_dim`` columns, then the legal mask."""
        return torch.cat([obs[..., : self.obs_dim], mask.to(obs.dtype)], dim=-1)

    def policy(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(N, 24) logits with illegal actions at a large negative value. Each row is run through the
        one head that plays it (:meth:`head_of_rows`), and only that head: a batch of bids, or of one
        trick, as searches and rollouts step them, costs one head's pass, however many heads there are."""
        x = self._inputs(obs, mask)
        if self.early_net is None and self.late_net is None:  # a plain network reads no trick
            logits = self.policy_net(x)
        else:
            head = self.head_of_rows(obs)
            logits = x.new_zeros((x.shape[0], NUM_ACTIONS))
            for k, net in enumerate((self.policy_net, self.early_net, self.late_net)):
                if net is not None:
                    rows = torch.nonzero(head == k).squeeze(1)
                    logits = logits.index_put((rows,), net(x.index_select(0, rows)))
        return torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))

    def head_of_rows(self, obs: torch.Tensor) -> torch.Tensor:
        """(N,) which head plays each row of ``obs`` (N, obs columns): 0 ``policy_net`` (the bids, and
        the card plays no other head plays), 1 ``early_net`` (the card plays before the late head's
        trick), 2 ``late_net`` (the card plays from ``late_from_trick`` on). The trick in play is
        read from the observation's trick leaders (-1 while bidding)."""
        trick = obs[:, OFFSETS["trick_leaders"]].sum(-1) - 1
        head = torch.zeros_like(trick, dtype=torch.int64)
        if self.early_net is not None:
            head = torch.where(trick >= -0.5, torch.ones_like(head), head)
        if self.late_net is not None:
            head = torch.where(trick >= self.late_from_trick.to(obs.dtype) - 0.5, torch.full_like(head, 2), head)
        return head

    def q(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Each action's value in game points (the action-value head; meaningful on legal actions only)."""
        if self.q_net is None:
            raise ValueError("this network has no action-value head (built with q_head=False)")
        out = self.q_net(self._inputs(obs, mask))
        if not self.dueling:
            return out
        adv, value = out[:, :NUM_ACTIONS], out[:, NUM_ACTIONS:]
        m = mask.to(adv.dtype)
        mean = (adv * m).sum(-1, keepdim=True) / m.sum(-1, keepdim=True).clamp_min(1.0)
        return value + adv - mean

    def owners(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(N, 20, 3) logits of which other seat holds each card (meaningful for the cards the seat
        cannot place; training and search only)."""
        if self.owner_net is None:
            raise ValueError("this network has no card-location head (built with owners=False)")
        return self.owner_net(self._inputs(obs, mask)).view(-1, NUM_CARDS, OTHER_SEATS)

    def value(self, obs: torch.Tensor, hidden_hands: torch.Tensor) -> torch.Tensor:
        """The critic: the observation plus every seat's hidden hand (training only)."""
        return self.value_net(torch.cat([obs[..., : self.obs_dim], hidden_hands], dim=-1)).squeeze(-1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # for export: logits only
        return self.policy(obs, mask)


def late_head_size(state: dict) -> tuple[int | None, int | None]:
    """(units, hidden layers) of the late card-play head a state dict holds; (None, None) without one."""
    first = state.get("late_net.0.weight")
    if first is None:
        return None, None
    return int(first.shape[0]), sum(1 for k in state if k.startswith("late_net.") and k.endswith(".weight")) - 1
