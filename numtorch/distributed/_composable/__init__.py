"""torch.distributed._composable: the old home of fully_shard."""
