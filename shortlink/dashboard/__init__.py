"""The signed-in dashboard."""
