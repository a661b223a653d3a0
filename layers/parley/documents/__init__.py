"""Definition documents: front matter, schemas, templates' places and the checks made when saved."""
