"""The remote provider (docs/remote.md): a reference HTTP server serving one memory folder, and its client.

Shared wire names live in `protocol`; the server in `server`/`store`; the client in `client`/`cache`.
"""
