"""Start-up hooks for interpreters started under ``python -m numtorch run``."""
