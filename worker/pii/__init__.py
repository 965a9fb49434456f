"""The PII stage's own detection logic, pure (no model): the case- and spacing-free view a
text is analysed in, the word lists, the finders of numbers, addresses and names Presidio
lacks, and the policy that turns findings into placeholders and quarantine."""
