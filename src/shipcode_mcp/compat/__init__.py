"""Apps written for the official SDK's ``FastMCP`` (mcp 1.x), its ``MCPServer`` (mcp 2.x) or the ``fastmcp``
package, served by shipcode-mcp: one module per API (:mod:`.fastmcp_sdk1`, :mod:`.mcpserver`,
:mod:`.fastmcp`) over what they share (:mod:`.base`), and the import hook of the command line
(:mod:`.hook`). Nothing here is imported unless such an app is served. See docs/migrating.md.
"""
