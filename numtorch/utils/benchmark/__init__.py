"""torch.utils.benchmark: timing statements (Timer, Measurement)."""
