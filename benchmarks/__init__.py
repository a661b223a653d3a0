"""`make bench`: figures Parley promises, measured and printed (never asserted in tests)."""
