"""What a run costs: the price table (`prices.toml`) and the budget a run keeps to."""
