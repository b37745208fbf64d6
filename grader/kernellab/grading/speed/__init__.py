"""The speed stage (stage.py) and what it runs: the timed programs (timing.py) and the grader's clock (clock.py)."""
