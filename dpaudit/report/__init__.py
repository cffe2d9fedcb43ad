"""Results -> canonical JSON -> HTML (jinja2, self-contained), JUnit XML, SARIF 2.1.0."""
