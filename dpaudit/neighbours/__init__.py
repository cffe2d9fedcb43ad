"""Neighbour relations and candidate neighbouring-pair generators."""
