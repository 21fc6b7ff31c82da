"""The stages of a tutor turn, in the order `tutor/turn.py` runs them: open, recall,
understand (categorize, rewrite, translate), find (reuse, search and grade), write, verify,
record; each a module with a frozen input and output."""
