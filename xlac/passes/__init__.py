"""HLO-to-HLO passes: shape inference, verifier helpers, rewrites, the pipeline."""
