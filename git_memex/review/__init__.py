"""Team review: personal → outbox → repository by explicit steps."""
