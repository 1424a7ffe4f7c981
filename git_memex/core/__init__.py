"""The memory itself: the record and its file format, files on disk, where they live, text helpers, the one runner of git (`gitcmd`)."""
