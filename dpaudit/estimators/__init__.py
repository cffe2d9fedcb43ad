"""Event selection, Clopper-Pearson bounds, ε and δ lower bounds, exact (white-box) losses."""
