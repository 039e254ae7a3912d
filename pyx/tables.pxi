# The tables the fast path looks things up in, built from the catalogue (included by _engine_c.pyx;
# route kinds and sizes in tables.pxd): routes, plain tools and the resources C reads itself.


cdef class _Route:
    cdef bytes method
    cdef str name
    cdef int kind
    cdef bytes answer      # R_CONST: the bytes after the id
    cdef object handler    # R_READ / R_OTHER


cdef class _FastTool:
    """A plain tool whose arguments form a flat shape, validated straight from the input bytes."""
    cdef bytes name
    cdef object func
    cdef object failed     # failed(error) -> the result body of a call that raised
    cdef bytes invalid     # its "Invalid arguments for <tool>" result body
    cdef int count
    cdef int positional    # the first fields that are also the function's first parameters, in order
    cdef list field_names  # bytes, kept alive for field_text
    cdef const char* field_text[MAX_MEMBERS]
    cdef Py_ssize_t field_len[MAX_MEMBERS]
    cdef list field_keys   # str
    cdef unsigned int admits[MAX_MEMBERS]  # per field: a bit (1 << V_*) per value kind it admits
    cdef bint required[MAX_MEMBERS]
    cdef bint mirrored     # an argument is mirrored in an HTTP header: HTTP checks its calls itself
    cdef bint fallback     # arguments the checks refuse go to the tool's own validation (a lax tool)
    cdef bint floats[MAX_MEMBERS]  # per field: an integer is passed as a float (a lax tool's "number")
    # A framework's tool (catalogue.FastTool.layout): its result's bytes after the id around a value's text
    # (None: the kind is not laid out), its answers of True, False and None (None: not encoded), and its
    # encode(value) for every other value; encode None: a native tool.
    cdef object encode
    cdef tuple str_pieces
    cdef tuple int_pieces
    cdef tuple float_pieces
    cdef bytes true_answer
    cdef bytes false_answer
    cdef bytes none_answer


cdef class _Read:
    """A resource or template whose reads C makes itself (``Resource.direct``).

    Its answer is the bytes of :meth:`~shipcode_mcp.handlers.Resource.body` around the JSON
    string of what the function read, taken from the body of an empty read: after the id,
    ``head`` + (a template's) uri + ``text_open`` or ``blob_open`` + the characters + ``close``.
    """
    cdef object resource
    cdef object func
    cdef object match      # a template's match(uri) -> its values or None; None for a resource
    cdef bytes uri         # a resource's uri in UTF-8
    cdef bytes head        # up to a template's uri (a resource's is in text_open and blob_open)
    cdef bytes text_open   # up to the text's characters, its opening quote included
    cdef bytes blob_open
    cdef bytes close       # from the closing quote


cdef _Read _read_of(resource, bint template):
    """How C answers reads of a resource or template; None when its body is not laid out as C writes it."""
    cdef _Read read = _Read()
    read.resource = resource
    read.func = resource.read
    read.match = resource.match if template else None
    read.uri = resource.uri.encode("utf-8")
    uri = "" if template else resource.uri
    text_open, _, close = resource.body(uri, "").rpartition(b'""')
    blob_open, _, blob_close = resource.body(uri, b"").rpartition(b'""')
    read.head = RESULT_MID
    if template:  # the empty uri is the body's first empty string
        head, _, text_open = text_open.partition(b'""')
        read.head += head
        if not blob_open.startswith(head + b'""'):
            return None
        blob_open = blob_open[len(head) + 2:]
    read.text_open = text_open + b'"'
    read.blob_open = blob_open + b'"'
    read.close = b'"' + close + RESULT_TAIL
    # The layout holds for a uri and contents that are not empty.
    probe = "t://x" if template else resource.uri
    written = read.head + (dumps(probe) if template else b"")
    text = RESULT_MID + resource.body(probe, "x\n") + RESULT_TAIL
    blob = RESULT_MID + resource.body(probe, b"\0") + RESULT_TAIL
    if blob_close != close or written + read.text_open + b'x\\n' + read.close != text \
            or written + read.blob_open + b"AA==" + read.close != blob:
        return None
    return read


# The scanner's value kinds, by the names of schema.FLAT_TYPE_ADMITS (the one type table).
cdef dict _VALUE_KIND_BITS = {
    "string": 1 << V_STR,
    "integer": 1 << V_INT,
    "float": 1 << V_FLOAT,
    "boolean": (1 << V_TRUE) | (1 << V_FALSE),
    "null": 1 << V_NULL,
}
cdef dict _ADMITS = {
    kind: sum(_VALUE_KIND_BITS[value_kind] for value_kind in admits) for kind, admits in FLAT_TYPE_ADMITS.items()
}


cdef inline bint _fits(unsigned int admits, int value_kind) noexcept nogil:
    return (admits >> value_kind) & 1


cdef _Route _route_of(method, target, int kind):
    """A method's route of this kind, with its constant answer (R_CONST) or its handler (R_READ)."""
    cdef _Route route = _Route()
    route.method = method.encode("utf-8")
    route.name = method
    route.kind = kind
    if kind == R_CONST:
        route.answer = target
    elif kind == R_READ:
        route.handler = target
    return route


# The fast path's route kind (RouteKind) of each of the catalogue's (CatalogueKind: catalogue.RouteKind),
# by era: 2026-07-28's fast path answers constants and tools/call only.
_LEGACY_KINDS = {CatalogueKind.CONSTANT: R_CONST, CatalogueKind.TOOL_CALL: R_TOOLS_CALL, CatalogueKind.READ: R_READ,
                 CatalogueKind.HANDLER: R_OTHER}
_MODERN_KINDS = {**_LEGACY_KINDS, CatalogueKind.READ: R_OTHER}


cdef list _routes_of(dict routes, dict kinds, dict fast_kinds):
    """An era's routes (``routes``, their ``kinds`` as the catalogue publishes them), in the catalogue's order.
    A route without a published kind (added to ``routes`` by hand) is served as any handler: by the line rules."""
    return [_route_of(method, target, fast_kinds[kinds.get(method, CatalogueKind.HANDLER)])
            for method, target in routes.items()]


cdef _FastTool _fast_tool_of(spec):
    """How C calls a plain tool (a ``catalogue.fast_tools`` record); None when it has too many fields."""
    cdef _FastTool fast
    if len(spec.fields) > MAX_MEMBERS:
        return None
    fast = _FastTool()
    fast.name = spec.name.encode("utf-8")
    fast.func = spec.func
    fast.failed = spec.failed
    fast.mirrored = spec.mirrored
    fast.fallback = spec.fallback
    fast.invalid = spec.invalid
    fast.count = len(spec.fields)
    fast.positional = spec.positional
    fast.field_names = []
    fast.field_keys = []
    for i, (field, kind, required) in enumerate(spec.fields):
        fast.field_names.append(field.encode("utf-8"))
        fast.field_text[i] = PyBytes_AS_STRING(fast.field_names[i])
        fast.field_len[i] = PyBytes_GET_SIZE(fast.field_names[i])
        fast.field_keys.append(field)
        fast.admits[i] = _ADMITS[kind]
        fast.required[i] = required
        fast.floats[i] = spec.fallback and kind == "number"
    layout = spec.layout
    if layout is not None:
        fast.encode = spec.encode
        fast.str_pieces = layout.pieces.get(str)
        fast.int_pieces = layout.pieces.get(int)
        fast.float_pieces = layout.pieces.get(float)
        fast.true_answer = layout.constants.get(True)
        fast.false_answer = layout.constants.get(False)
        fast.none_answer = layout.constants.get(None)
    return fast
