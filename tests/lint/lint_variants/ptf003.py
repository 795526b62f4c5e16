"""PTF003: ``.cuda(async=True)``, a SyntaxError since Python 3.7 (found in the tokens)."""

PITFALL = {
    "target_in_loop": """
import torch
def train(loader, model):
    for i, (inp, target) in enumerate(loader):
        target = target.cuda(async=True)
        out = model(inp)
""",
    "device_and_async": """
import torch
x = torch.zeros(3).cuda(0, async=True)
""",
    "both_batch_tensors": """
import torch
def step(images, labels):
    images = images.cuda(async=True)
    labels = labels.cuda(async=True)
    return images, labels
""",
    "variable_chain": """
import torch
from torch.autograd import Variable
input_var = Variable(torch.ones(2)).cuda(async=True)
""",
    "in_method": """
import torch
class Prefetcher:
    def preload(self, batch):
        self.next_input = batch[0].cuda(async=True)
""",
}

NEAR_MISS = {
    "non_blocking": """
def move(batch):
    return batch.cuda(non_blocking=True)
""",
    "async_def": """
import asyncio
async def fetch(q):
    return await q.get()
""",
    "is_async_keyword": """
def submit(job, is_async=True):
    return job
submit(None, is_async=True)
""",
}

SEEN = {
    "target_in_loop": "https://github.com/pytorch/examples (imagenet/main.py before 0.4: target.cuda(async=True))",
    "both_batch_tensors": "https://github.com/pytorch/pytorch/pull/40746",
}
