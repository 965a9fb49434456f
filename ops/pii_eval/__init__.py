"""The PII evaluation: a labelled corpus (``tests/data/pii``) and the scorer behind ``make pii-eval``."""
