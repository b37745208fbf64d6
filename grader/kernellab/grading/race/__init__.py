"""The race-check stage (stage.py) and what it runs: the CPU backend's build and thread orders (check.py)."""
