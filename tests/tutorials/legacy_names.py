"""The names older tutorials and programs still use (after "Tensors" and the former
Torch users' tutorials): the legacy tensor types such as torch.LongTensor, the
torch.functional module, and torch.autograd.Variable."""

import torch
import torch.functional
from torch.autograd import Variable

indices = torch.LongTensor([2, 0, 1])
print(indices, indices.dtype, indices.type())
print(torch.FloatTensor(2, 3).shape, torch.FloatTensor([[1, 2], [3, 4]]))
print(isinstance(indices, torch.LongTensor), isinstance(indices, torch.FloatTensor))
words = torch.tensor([[0.5, 1.5], [2.5, 3.5], [4.5, 5.5]])
print(words[indices], torch.index_select(words, 0, indices))
print(torch.DoubleTensor([1.5]).type(torch.LongTensor), torch.ByteTensor([3, 4]))
print(words.type(torch.DoubleTensor).dtype, words.long().type())

a, b = torch.functional.split(torch.arange(6.0), 3)
print(a, b)
print(torch.functional.einsum("i,j->ij", a, b))
print(torch.functional.norm(torch.tensor([3.0, 4.0])))
print(torch.functional.broadcast_tensors(torch.ones(2, 1), torch.zeros(3)))
grid_x, grid_y = torch.functional.meshgrid(a, b, indexing="ij")
print(grid_x + grid_y)
print(torch.functional.unique(torch.LongTensor([3, 1, 3, 2]), return_counts=True))
print(torch.functional.cdist(torch.ones(2, 2), torch.zeros(1, 2)))
print(torch.functional.tensordot(torch.ones(2, 3), torch.ones(3, 2), dims=1))

x = Variable(torch.ones(2, 2), requires_grad=True)
y = (x * 3).sum()
y.backward()
print(x.grad, type(x).__name__)
