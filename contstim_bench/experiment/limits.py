"""The experiment server's limits on what one request or one client may do (defaults of
``contstim experiment serve``; a module of constants, so the command line reads them without
importing Flask)."""

MAX_BODY_BYTES = 2048
"""Largest accepted request body in bytes."""
MAX_JSON_DEPTH = 4
"""Deepest nesting of a request body (the API's bodies are flat objects)."""
MAX_PER_GROUP = 100
"""Default cap on participants per design group (sign-ups beyond ``groups x cap`` get a 403)."""
SIGNUPS_PER_MINUTE = 60
"""Default number of sign-ups one client address may make per minute (more get a 429)."""
