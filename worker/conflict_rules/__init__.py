"""The conflict rules, pure and model-free: ``verdicts`` (what a pair of statements means)
and ``edits`` (whether two words are one word written twice)."""
