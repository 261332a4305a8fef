"""A small zoo."""
