"""Bisection: pure algorithms (algorithms.py) and the sessions that drive them."""
