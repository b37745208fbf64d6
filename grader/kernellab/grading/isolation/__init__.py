"""The isolation stage (stage.py) and what it runs: each task's folder spliced (splice.py) from what libclang
finds (parse.py)."""
