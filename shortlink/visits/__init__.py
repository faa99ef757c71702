"""Visits: what a visitor of a short URL gets, and the click it leaves behind."""
