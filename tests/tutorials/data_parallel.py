"""Data parallelism (after "Optional: Data Parallelism"): a model wrapped in
nn.DataParallel, fed batches of a random dataset through a shuffling DataLoader, printing
the sizes seen inside and outside the model."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

input_size = 5
output_size = 2
batch_size = 30
data_size = 100

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class RandomDataset(Dataset):
    def __init__(self, size, length):
        self.len = length
        self.data = torch.randn(length, size)

    def __getitem__(self, index):
        return self.data[index]

    def __len__(self):
        return self.len


rand_loader = DataLoader(
    dataset=RandomDataset(input_size, data_size), batch_size=batch_size, shuffle=True
)


class Model(nn.Module):
    def __init__(self, input_size, output_size):
        super().__init__()
        self.fc = nn.Linear(input_size, output_size)

    def forward(self, input):
        output = self.fc(input)
        print("\tIn Model: input size", input.size(), "output size", output.size())
        return output


model = Model(input_size, output_size)
print("GPUs:", torch.cuda.device_count())
# the tutorial wraps only on several GPUs; DataParallel on none runs the module itself
model = nn.DataParallel(model)
model.to(device)
print(type(model).__name__, type(model.module).__name__, model.device_ids)

for data in rand_loader:
    input = data.to(device)
    output = model(input)
    print("Outside: input size", input.size(), "output_size", output.size())

state = model.state_dict()
print(sorted(state))
