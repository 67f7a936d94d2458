"""Sync: pull, push, the transport, the plan, and the checks of what a remote sends."""
