"""Tests of the documentation site (docs/, mkdocs.yml) and README.md: the site builds with
no warning, and every example that shows a command runs as shown on the offline model."""
