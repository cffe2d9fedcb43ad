"""Worst-case neighbouring-pair search: structured patterns, hypothesis-targeted search, refinement."""
