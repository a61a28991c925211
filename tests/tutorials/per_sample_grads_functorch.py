"""Per-sample gradients with functorch (after functorch's "Per-sample-gradients"):
make_functional_with_buffers turns a CNN into a function of its parameters, and
vmap(grad(...)) gives every sample's gradient at once, checked against a loop of
backward passes."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from functorch import grad, make_functional_with_buffers, vmap

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


batch_size = 64
num_batches = 5
data = torch.randn(num_batches, batch_size, 1, 28, 28, device=device)
targets = torch.randint(10, (num_batches, 64), device=device)
model = SimpleCNN().to(device=device)
data, targets = data[0], targets[0]


def compute_grad(sample, target):
    prediction = model(sample.unsqueeze(0))
    loss = loss_fn(prediction, target.unsqueeze(0))
    return torch.autograd.grad(loss, list(model.parameters()))


def compute_sample_grads(data, targets):
    sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
    sample_grads = zip(*sample_grads)
    return [torch.stack(shards) for shards in sample_grads]


# cuDNN's nondeterministic kernels would make the two ways differ on a GPU
with torch.backends.cudnn.flags(enabled=True, deterministic=True, benchmark=False):
    per_sample_grads = compute_sample_grads(data, targets)
    print(per_sample_grads[0].shape)

    fmodel, params, buffers = make_functional_with_buffers(model)
    print(type(params).__name__, [tuple(p.shape) for p in params], buffers)

    def compute_loss_stateless_model(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = fmodel(params, buffers, batch)
        return loss_fn(predictions, targets)

    ft_compute_grad = grad(compute_loss_stateless_model)
    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)

for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads):
    assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
print([tuple(g.shape) for g in ft_per_sample_grads])
print(torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
