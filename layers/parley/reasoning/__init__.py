"""The reasoning type: its document, its prompt, output shapes, provider options and schema warnings."""
