"""The pieces of torch.utils.benchmark: common (TaskSpec, Measurement), timer, compare."""
