"""Finding memories: query building, ranking, synonyms, supersede chains."""
