"""Definitions: saving, versioning, listing and retiring functions (``http-api.md``, "Definitions").

``service`` holds the rules, ``store`` the port and its DynamoDB adapter, ``model`` the shapes.
"""
