"""xlac as a jax PJRT backend (see docs/jax_backend.md)."""
