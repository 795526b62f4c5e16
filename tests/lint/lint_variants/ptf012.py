"""PTF012: a second backward() through a graph the first one freed."""

PITFALL = {
    "shared_square": """
import torch
def grads():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    d = y.sum()
    e = (3 * y).sum()
    d.backward()
    e.backward()
    return x.grad
""",
    "two_losses_one_output": """
import torch.nn as nn
def step(model, x, y, z):
    out = model(x)
    loss1 = nn.functional.mse_loss(out, y)
    loss2 = nn.functional.l1_loss(out, z)
    loss1.backward()
    loss2.backward()
""",
    "gan_without_detach": """
import torch
def gan_step(G, D, z, bce, ones, zeros):
    fake = G(z)
    d_loss = bce(D(fake), zeros)
    d_loss.backward()
    g_loss = bce(D(fake), ones)
    g_loss.backward()
""",
    "shared_features_two_heads": """
import torch
def step(encoder, head_a, head_b, x):
    feat = encoder(x)
    la = head_a(feat).mean()
    lb = head_b(feat).mean()
    la.backward()
    lb.backward()
""",
    "sam_second_pass_reuses_output": """
def sam_step(model, criterion, optimizer, images, target):
    output = model(images)
    loss = criterion(output, target)
    loss.backward()
    optimizer.first_step(zero_grad=True)
    criterion(output, target).backward()
    optimizer.second_step(zero_grad=True)
""",
}

NEAR_MISS = {
    "retain_graph": """
import torch
def grads(x):
    y = x * x
    y.sum().backward(retain_graph=True)
    (3 * y).sum().backward()
""",
    "separate_forwards_same_names": """
def step(model, criterion, x1, x2, y):
    loss1 = criterion(model(x1), y)
    loss1.backward()
    loss2 = criterion(model(x2), y)
    loss2.backward()
""",
    "gan_with_detach": """
def gan_step(G, D, z, bce, ones, zeros):
    fake = G(z)
    d_loss = bce(D(fake.detach()), zeros)
    d_loss.backward()
    g_loss = bce(D(fake), ones)
    g_loss.backward()
""",
    "branches": """
def step(loss, fabric, use_fabric):
    if use_fabric:
        fabric.backward(loss)
    else:
        loss.backward()
""",
    "gan_targets_from_a_type_alias": "import torch\nfrom torch.autograd import Variable\nfrom models import Generator, Discriminator\n\ncuda = torch.cuda.is_available()\nTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\ngenerator, discriminator = Generator(), Discriminator()\nadversarial_loss = torch.nn.BCELoss()\nopt_G = torch.optim.Adam(generator.parameters())\nopt_D = torch.optim.Adam(discriminator.parameters())\nfor imgs, _ in loader:\n    valid = Variable(Tensor(imgs.shape[0], *discriminator.output_shape).fill_(1.0), requires_grad=False)\n    fake = Variable(Tensor(imgs.shape[0], *discriminator.output_shape).fill_(0.0), requires_grad=False)\n    opt_G.zero_grad()\n    gen_imgs = generator(torch.randn(imgs.shape[0], 100))\n    g_loss = adversarial_loss(discriminator(gen_imgs), valid)\n    g_loss.backward()\n    opt_G.step()\n    opt_D.zero_grad()\n    real_loss = adversarial_loss(discriminator(imgs), valid)\n    fake_loss = adversarial_loss(discriminator(gen_imgs.detach()), fake)\n    d_loss = (real_loss + fake_loss) / 2\n    d_loss.backward()\n    opt_D.step()\n",
    "warm_up_branch_goes_on": "import torch\n\ndef train(generator, discriminator, loader, opt_G, warmup):\n    for i, (lr, hr) in enumerate(loader):\n        opt_G.zero_grad()\n        gen_hr = generator(lr)\n        loss_pixel = torch.nn.functional.l1_loss(gen_hr, hr)\n        if i < warmup:\n            loss_pixel.backward()\n            opt_G.step()\n            continue\n        loss_G = loss_pixel + 1e-3 * discriminator(gen_hr).mean()\n        loss_G.backward()\n        opt_G.step()\n",
}

SEEN = {
    "sam_second_pass_reuses_output": "https://github.com/davda54/sam/issues/45",
    "gan_without_detach": "https://github.com/pytorch/xla/issues/1961",
    "two_losses_one_output": "https://github.com/ueoo/AGIS-Net/issues/8",
    "branches": "lightning/pytorch/core/module.py (benchmarks/lint_review.md: two branches of one if)",
}

# round 2: in the training loop, the first loss's graph is part of the second loss
PITFALL["gan_loop_loss_reused"] = """
import torch
def train(netD, netG, loader, bce, optD, nz):
    for real, _ in loader:
        optD.zero_grad()
        loss_real = bce(netD(real), torch.ones(real.size(0)))
        loss_real.backward()
        fake = netG(torch.randn(real.size(0), nz, 1, 1))
        loss_fake = bce(netD(fake.detach()), torch.zeros(real.size(0)))
        loss_d = loss_real + loss_fake
        loss_d.backward()
        optD.step()
"""
NEAR_MISS["two_models_one_target"] = """
import torch
import torch.nn.functional as F
def compare(ref, test, x):
    x_test = x.clone().detach().requires_grad_(True)
    out_ref = ref(x)
    out_test = test(x_test)
    target = torch.ones_like(out_ref)
    F.mse_loss(out_ref, target).backward()
    F.mse_loss(out_test, target).backward()
"""
NEAR_MISS["gradient_argument_shared"] = """
import torch
def compare(model_a, model_b, x):
    grad_out = torch.rand(4, 8)
    g = grad_out.clone()
    out_a = model_a(x)
    out_a.backward(g)
    out_b = model_b(x)
    out_b.backward(g)
"""
SEEN["gan_loop_loss_reused"] = (
    "https://github.com/facebookresearch/pytorch_GAN_zoo/issues/83 (a loss backwarded, then a second backward through the freed graph)"
)
SEEN["two_models_one_target"] = (
    "torchao/test/prototype/moe_training/test_mxfp8_linear.py (labels = torch.ones_like(out_ref) for two models, in build/realcode/untuned)"
)

# round 5: two tensors unpacked from ONE call share that call's graph; backward on each frees it
# (naver-ai/StyleMapGAN#16: ``adv_loss, w_rec_loss, stylecode = model(None, "G")``, then two backwards)
PITFALL["unpacked_outputs_two_backwards"] = """
def generator_step(gen, z, opt, lam):
    opt.zero_grad()
    adv, recon = gen(z)
    adv.mean().backward()
    (lam * recon.abs().mean()).backward()
    opt.step()
"""
PITFALL["unpacked_in_method"] = """
import torch.nn.functional as F
class Learner:
    def step(self, images, labels):
        scores, embed = self.net(images)
        loss = F.cross_entropy(scores, labels)
        loss.backward()
        penalty = embed.norm(dim=-1).mean()
        penalty.backward()
"""
NEAR_MISS["unpacked_retained"] = """
def generator_step(gen, z, lam):
    adv, recon = gen(z)
    adv.mean().backward(retain_graph=True)
    (lam * recon.abs().mean()).backward()
"""
NEAR_MISS["unpacked_second_forward"] = """
def generator_step(gen, z, lam):
    adv, recon = gen(z)
    adv.mean().backward()
    adv, recon = gen(z)
    (lam * recon.abs().mean()).backward()
"""
NEAR_MISS["unpacked_two_models"] = """
def step(student, teacher, x):
    s_out, s_feat = student(x)
    t_out, t_feat = teacher(x)
    s_out.sum().backward()
    t_feat.pow(2).mean().backward()
"""
NEAR_MISS["unpacked_detached"] = """
def step(net, x, y, crit):
    scores, embed = net(x)
    crit(scores, y).backward()
    embed = embed.detach()
    print(embed.norm())
"""
SEEN["unpacked_outputs_two_backwards"] = "https://github.com/naver-ai/StyleMapGAN/issues/16"
SEEN["unpacked_retained"] = "https://github.com/davda54/sam/issues/10 (output, logit_map = model(image))"
# names unpacked from a helper of the module are data or separate models, not one forward's graph
# (torchao's tests: ``local_input, local_target = get_replicated_local_batch(...)``, ``ref, fp8 =
# _build_linear_pair(...)``, in build/realcode/untuned; each loss then has its own graph)
NEAR_MISS["pair_from_module_helper"] = """
import torch
import torch.nn.functional as F
def make_pair(k, n):
    return torch.nn.Linear(k, n), torch.nn.Linear(k, n)
def check(k, n):
    base, quant = make_pair(k, n)
    x = torch.randn(4, k)
    F.mse_loss(base(x), torch.zeros(4, n)).backward()
    F.mse_loss(quant(x), torch.zeros(4, n)).backward()
"""
NEAR_MISS["batch_from_module_helper"] = """
import torch.nn.functional as F
def get_batch(i):
    return None, None
def step(model_a, model_b, i):
    inputs, target = get_batch(i)
    F.mse_loss(model_a(inputs), target).backward()
    F.mse_loss(model_b(inputs), target).backward()
"""
NEAR_MISS["twin_critics_one_target_under_no_grad"] = """
import torch
import torch.nn.functional as F
def update_critics(q1, q2, opt1, opt2, target_q_net, state, action, reward, next_state):
    with torch.no_grad():
        target_q = reward + 0.99 * target_q_net(next_state)
    loss1 = F.mse_loss(q1(state, action), target_q)
    loss2 = F.mse_loss(q2(state, action), target_q)
    opt1.zero_grad()
    loss1.backward()
    opt1.step()
    opt2.zero_grad()
    loss2.backward()
    opt2.step()
"""
SEEN["twin_critics_one_target_under_no_grad"] = (
    "pfrl agents/soft_actor_critic.py and td3.py (two critics' losses against one target computed under "
    "torch.no_grad(), in round 3's tuning half)"
)

# A reversible block's backward pass: the second graph is built from a tensor recomputed under no_grad and
# made a leaf again, so the two backward calls go through two graphs (dalle-pytorch's reversible.py, round
# 11's held-out half after its reading).
_REVERSIBLE = """
import torch
def backward_pass(f, g, y1, y2, dy1, dy2):
    with torch.enable_grad():
        y1.requires_grad = True
        gy1 = g(y1)
        torch.autograd.backward(gy1, dy2)
    {block}
        x2 = y2 - gy1
        dx1 = dy1 + y1.grad
    with torch.enable_grad():
        x2.requires_grad = True
        fx2 = f(x2)
        torch.autograd.backward(fx2, dx1)
    return x2.grad
"""
NEAR_MISS["second_graph_from_a_recomputed_leaf"] = _REVERSIBLE.format(block="with torch.no_grad():")
SEEN["second_graph_from_a_recomputed_leaf"] = "lucidrains/DALLE-pytorch dalle_pytorch/reversible.py (round 11's held-out half)"
PITFALL["second_graph_reaches_the_first"] = _REVERSIBLE.format(block="with torch.enable_grad():")
_ACTOR_CRITIC_LOOP = """
def update(states, actions, advantages, returns, epochs):
    agent = ActorCritic(3, 1)
    actor_opt = torch.optim.Adam(agent.actor.parameters(), lr=3e-4)
    critic_opt = torch.optim.Adam(agent.critic.parameters(), lr=1e-3)
    for _ in range(epochs):
        _, infos = agent(states)
        policy_loss = -(infos["mass"].log_prob(actions) * advantages).mean()
        actor_opt.zero_grad()
        policy_loss.backward()
        actor_opt.step()
        value_loss = (infos["value"] - returns).pow(2).mean()
        critic_opt.zero_grad()
        value_loss.backward()
        critic_opt.step()
"""
PREVIEW = globals().get("PREVIEW", {})
PREVIEW["actor_and_critic_heads_on_the_state"] = """
import torch
from torch import nn
from torch.distributions import Normal
class ActorCritic(nn.Module):
    def __init__(self, obs, act):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs, 64), nn.Tanh(), nn.Linear(64, act))
        self.critic = nn.Sequential(nn.Linear(obs, 64), nn.Tanh(), nn.Linear(64, 1))
        self.log_std = nn.Parameter(torch.zeros(act))
    def forward(self, state):
        mass = Normal(self.actor(state), self.log_std.exp())
        value = self.critic(state)
        return mass.sample(), {"mass": mass, "value": value}
""" + _ACTOR_CRITIC_LOOP
PITFALL["actor_and_critic_heads_on_a_shared_trunk"] = """
import torch
from torch import nn
from torch.distributions import Normal
class ActorCritic(nn.Module):
    def __init__(self, obs, act):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs, 64), nn.Tanh())
        self.actor = nn.Linear(64, act)
        self.critic = nn.Linear(64, 1)
        self.log_std = nn.Parameter(torch.zeros(act))
    def forward(self, state):
        h = self.body(state)
        mass = Normal(self.actor(h), self.log_std.exp())
        return mass.sample(), {"mass": mass, "value": self.critic(h)}
""" + _ACTOR_CRITIC_LOOP
SEEN["actor_and_critic_heads_on_the_state"] = (
    "learnables/cherry examples/ppo_pendulum_gpu.py and examples/spinning-up/cherry_ppo.py (round 12's tuning half, "
    "read wrong: policy_loss.backward() then value_loss.backward() on an ActorCritic whose actor and critic each "
    "read the state; a copy of the loop ran both backwards on 2.13)"
)
SEEN["actor_and_critic_heads_on_a_shared_trunk"] = (
    "the same loop over a shared body (the A2C/PPO 'shared layers' variant): the second backward goes through the "
    "body's nodes the first one freed"
)

# DeepRL's DDPG (round 15's held-out half, read wrong; tuning material since): the batch is converted by a helper
# a star import brings (tensor(x)), not a model, and the second loss comes from a fresh forward.
NEAR_MISS["batch_converted_by_a_star_imported_helper"] = """
from ..utils import *
def update(network, replay, critic_opt, actor_opt):
    transitions = replay.sample()
    states = tensor(transitions.state)
    actions = tensor(transitions.action)
    q = network.critic(network.feature(states), actions)
    critic_loss = (q - tensor(transitions.target)).pow(2).mean()
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    phi = network.feature(states)
    policy_loss = -network.critic(phi.detach(), network.actor(phi)).mean()
    actor_opt.zero_grad()
    policy_loss.backward()
    actor_opt.step()
"""
# DeepRL's PPO: two losses read two parts of one model call whose forward the file does not show (a policy
# head's log-probabilities and a value head's estimate): whether they share a node is not known here.
_PARTS = """
import torch
class Agent:
    def update(self, entry, actor_opt, critic_opt):
        prediction = self.network(entry.state, entry.action)
        policy_loss = -(prediction["{policy}"] * entry.advantage).mean()
        value_loss = (entry.ret - prediction["v"]).pow(2).mean()
        actor_opt.zero_grad()
        policy_loss.backward()
        actor_opt.step()
        critic_opt.zero_grad()
        value_loss.backward()
        critic_opt.step()
"""
PREVIEW = globals().get("PREVIEW", {})
PREVIEW["two_parts_of_a_model_whose_forward_is_not_shown"] = _PARTS.format(policy="log_pi_a")
PITFALL["one_part_of_a_model_read_by_both_losses"] = _PARTS.format(policy="v")
SEEN["batch_converted_by_a_star_imported_helper"] = (
    "ShangtongZhang/DeepRL deep_rl/agent/DDPG_agent.py:98 (round 15's held-out half, read wrong)"
)
SEEN["two_parts_of_a_model_whose_forward_is_not_shown"] = (
    "ShangtongZhang/DeepRL deep_rl/agent/PPO_agent.py:98 (round 15's held-out half, read wrong)"
)

# An agent (no nn.Module) whose losses come from methods it inherits (from a base class of the file here; of
# another file of the package in genrl), each running its own forward pass on a batch sampled from its buffer:
# the batch is data, the two graphs share no node. A critic output computed once and
# used by both losses is one graph.
_AGENT = """
import torch
import torch.nn.functional as F
class OffPolicyAgent:
    def sample_from_buffer(self):
        return self.buffer.sample(self.batch_size)
    def get_q_loss(self, batch):
        q = self.critic(batch.states, batch.actions)
        return F.mse_loss(q, batch.returns)
    def get_p_loss(self, states):
        return -self.critic(states, self.actor(states)).mean()
class DDPG(OffPolicyAgent):
    def __init__(self, actor, critic, lr):
        super().__init__()
        self.actor, self.critic = actor, critic
        self.opt_actor = torch.optim.Adam(actor.parameters(), lr=lr)
        self.opt_critic = torch.optim.Adam(critic.parameters(), lr=lr)
    def update(self, steps):
        for _ in range(steps):
            batch = self.sample_from_buffer()
{losses}
            self.opt_actor.zero_grad()
            policy_loss.backward()
            self.opt_actor.step()
            self.opt_critic.zero_grad()
            value_loss.backward()
            self.opt_critic.step()
"""
NEAR_MISS["losses_from_inherited_methods_of_an_agent"] = _AGENT.format(
    losses="            value_loss = self.get_q_loss(batch)\n            policy_loss = self.get_p_loss(batch.states)"
)
PITFALL["one_critic_output_under_both_losses"] = _AGENT.format(
    losses=(
        "            q = self.critic(batch.states, self.actor(batch.states))\n"
        "            value_loss = F.mse_loss(q, batch.returns)\n"
        "            policy_loss = -q.mean()"
    )
)
SEEN["losses_from_inherited_methods_of_an_agent"] = (
    "round 18's tuning half, read (genrl's DDPG and TD3: value_loss = self.get_q_loss(batch), policy_loss = "
    "self.get_p_loss(batch.states), methods of the base agent in another file; 4 findings read wrong)"
)
SEEN["one_critic_output_under_both_losses"] = "written for the guard: the critic's output shared by both losses"

# round 20: an object built from a class of the file (a flow whose base class the file imports) is no graph node:
# two losses each computed afresh from it share no graph (bgflow's tests/test_bg.py)
NEAR_MISS["object_of_a_local_class_under_both_losses"] = """
import torch
from flows import Flow, kl_div, nll_of
def test_gradients(prior, target):
    class Shift(Flow):
        def __init__(self, shift, scale):
            super().__init__()
            self.shift = torch.nn.Parameter(torch.tensor(shift))
            self.scale = torch.nn.Parameter(torch.tensor(scale))
    flow = Shift(1.0, 2.0).to(dtype=torch.float64)
    opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
    opt.zero_grad()
    x = target.sample(1000)
    nll = nll_of(prior, flow, x)
    nll.mean().backward()
    opt.zero_grad()
    kld = kl_div(prior, flow, target, 1000)
    kld.mean().backward()
"""
PITFALL["output_of_a_local_model_class_under_both_losses"] = """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(x)
def train(x, y):
    net = Net()
    out = net(x)
    first = (out - y).pow(2).mean()
    first.backward()
    second = out.abs().mean()
    second.backward()
"""
SEEN["object_of_a_local_class_under_both_losses"] = "bgflow tests/test_bg.py (round 20's tuning half)"
