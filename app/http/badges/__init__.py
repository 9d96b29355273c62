"""The badges: ``GET /badge/mcp`` (SVG, PNG, shields endpoint JSON), their cache, and cached hits
answered at the app's edge. The drawing itself is the ``badges`` package."""
