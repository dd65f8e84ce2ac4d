"""Plumbing every layer may use: errors, files, JSON, BLAS threads, executors, folder locks, fingerprints, provenance, colours."""
