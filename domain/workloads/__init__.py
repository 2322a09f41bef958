"""What a client asks (workloads, constraints) and what the advisor answers (options, estimates)."""
