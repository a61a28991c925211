"""The op database's helpers: sample-input makers and the test transform (no torch)."""
