"""torch.nn.modules: the layers, one module per family (the public names are listed in
numtorch/nn/__init__.py)."""
