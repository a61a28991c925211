"""torch.nn.functional: filled from op modules' API dicts (``nn.functional.*``)."""
