"""The web dashboard over Trino, alert rules and Grafana provisioning (README.md)."""
