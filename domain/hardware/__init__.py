"""What the hardware offers: peaks per precision, links, collectives, node sizes, family factors."""
