"""torch.linalg: filled from the op registry (ops with api ``linalg.*``)."""
