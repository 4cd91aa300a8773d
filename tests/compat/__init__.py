"""Programs written for the original engine (0.4), run unchanged against sanctum."""
