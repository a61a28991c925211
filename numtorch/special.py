"""torch.special: filled from the op registry (ops with api ``special.*``)."""
