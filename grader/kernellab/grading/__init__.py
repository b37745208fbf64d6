"""Grading one submission, stage by stage: pipeline.py lists the stages in order, each a module of
its own (see docs/architecture.md). Import from the modules themselves: this file loads none."""
