"""Links: the domain rules for creating, listing, changing and deleting short links."""
