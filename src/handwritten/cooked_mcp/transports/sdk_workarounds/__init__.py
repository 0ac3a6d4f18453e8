"""Every place cooked-mcp reaches into the mcp SDK's private internals (pinned: mcp==2.3.0).

Each module subclasses or replaces a part of the SDK, and each workaround in it carries a
comment naming the SDK behaviour it works around and the SDK issue or release that lets it
go. tests/surface/test_sdk_contract.py pins every private name used here, so an upgrade
that renames or reshapes one fails there first; tests/http and tests/stdio pin the
behaviour. On an upgrade, re-check each comment, and delete what the SDK now does itself.

* ``http_transport``: ``StreamableHTTPServerTransport`` subclassed through its private
  ``_handle_post_request`` / ``_terminate_unanswered_request`` and private state: plain JSON
  answers per request, the JSON-RPC errors the SDK leaves unsent, duplicate ids refused,
  cancelled requests left unanswered, and requests cut off by shutdown answered.
* ``http_sessions``: ``StreamableHTTPSessionManager`` through its private ``_admit_session``
  (re-classing the live transport it builds to the one above) and ``_serve_opening_request``:
  the session bounds, and refusals that name no session.
* ``stdio``: the SDK's ``stdio_server`` replaced by one on the event loop, and wrapped where
  it is still used, so the end of stdin does not cancel the requests read before it.
"""
