"""Looking after a memory store over time: doctor's checks, migration."""
