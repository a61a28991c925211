"""Model ensembling (after "Model ensembling"): ten MLPs stacked with
stack_module_state, run at once by vmap over functional_call on a copy of one model moved
to the meta device, checked against running each model."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import vmap
from torch.func import functional_call, stack_module_state

torch.manual_seed(0)


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x):
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


device = "cuda" if torch.cuda.is_available() else "cpu"
num_models = 10
data = torch.randn(100, 64, 1, 28, 28, device=device)
targets = torch.randint(10, (6400,), device=device)
models = [SimpleMLP().to(device) for _ in range(num_models)]

minibatches = data[:num_models]
predictions_diff_minibatch_loop = [model(mb) for model, mb in zip(models, minibatches)]
minibatch = data[0]
predictions2 = [model(minibatch) for model in models]

params, buffers = stack_module_state(models)

# a "stateless" copy: its parameters are meta tensors without storage
base_model = copy.deepcopy(models[0])
base_model = base_model.to("meta")
print(base_model.fc1.weight.device, base_model.fc1.weight.is_meta, base_model.fc1.weight)


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


print([p.size(0) for p in params.values()])
print({k: tuple(v.shape) for k, v in params.items()}, buffers)
assert minibatches.shape == (num_models, 64, 1, 28, 28)

predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
assert torch.allclose(
    predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5
)
predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
assert torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5)
print(predictions1_vmap.shape, predictions2_vmap.shape, predictions2_vmap.grad_fn)
loss = F.cross_entropy(predictions2_vmap.flatten(0, 1), targets[: 10 * 64])
loss.backward()
print(params["fc1.weight"].grad.shape, models[0].fc1.weight.grad)
