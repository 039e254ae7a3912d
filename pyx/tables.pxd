# Declarations of the route and read tables (tables.pxi): route kinds and the tables' sizes.

# How the fast path answers a method (_Route.kind).
cdef enum RouteKind:
    R_CONST = 1        # constant bytes after the id
    R_TOOLS_CALL = 2   # tools/call of a plain tool
    R_READ = 3         # resources/read
    R_OTHER = 4        # the line rules answer

cdef enum:
    MAX_ROUTES = 32        # methods in the C arrays; more are served by the line rules
    MAX_LISTED_READS = 32  # with more resources read in C, they are looked up by a dict
