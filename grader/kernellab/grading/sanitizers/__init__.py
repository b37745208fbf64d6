"""The sanitizers' stage (stage.py) and what it runs: compute-sanitizer and its reports (compute_sanitizer.py)."""
