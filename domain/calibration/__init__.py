"""Calibration points, the harness that reproduces them and the ledger built from it."""
