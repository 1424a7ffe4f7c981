"""Keeping secrets and private text out: redaction on write, masking on read, commit checks."""
