"""Cost per hour, token, run and image; rent versus buy; price feeds; GPU comparison."""
