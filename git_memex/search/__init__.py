"""Finding memories: query parsing (`query`), ranking, synonyms, supersede chains."""
