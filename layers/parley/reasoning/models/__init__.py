"""Models of reasoning functions: the providers that answer, their aliases and catalog."""
