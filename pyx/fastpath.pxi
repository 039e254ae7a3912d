# The fast path: a line of the common shapes answered straight from its bytes (included by
# _engine_c.pyx; functions of an Engine, called by Engine._line, Engine.fast and Engine.http_modern
# through _fast).
#
# Each answer is provably the line rules' own (shipcode_mcp.lines, which the pure engine runs for
# every line); whatever it cannot prove returns 0 and the line rules judge the line.


cdef inline bint _bytes_of(object data, const unsigned char** p, Py_ssize_t* n) noexcept:
    """The text of a whole message or of a value compared with one (``bytes``); 0 for any other type."""
    if type(data) is not bytes:
        return 0
    p[0] = <const unsigned char*>PyBytes_AS_STRING(data)
    n[0] = PyBytes_GET_SIZE(data)
    return 1


cdef inline int _fast(Engine engine, const unsigned char* line, Py_ssize_t n) except -1:
    """``_fast_line`` for a line within the limit; 0 for a longer one: the line rules' size rule is theirs
    alone (a separate step, so that the C compiler inlines into ``_fast_line`` what it did before)."""
    if n > engine._max:
        return 0
    return _fast_line(engine, line, n)


cdef int _fast_line(Engine engine, const unsigned char* line, Py_ssize_t n) except -1:
    """Answer a line of the common shapes: 1 when answered, 2 when answered and input
    must pause, 0 when the slow path must decide."""
    cdef Scan s
    cdef Member top[MAX_MEMBERS]
    cdef Member params[MAX_MEMBERS]
    cdef Member arguments[MAX_MEMBERS]
    cdef int top_count = 0
    cdef int params_count = -1  # -1: no params
    cdef int arguments_count = -1
    cdef int i
    cdef int step
    cdef Meta meta
    meta.cache = &engine._meta_cache
    meta.present = False
    meta.version = NULL
    meta.capabilities = False
    cdef Member* m
    cdef Member* rid = NULL
    cdef Member* method = NULL
    cdef bint jsonrpc = False
    s.p = line
    s.end = line + n
    _skip_ws(&s)
    if s.p >= s.end or s.p[0] != 123:
        return 0
    s.p += 1
    _skip_ws(&s)
    while True:
        if top_count == 4:
            return 0
        m = &top[top_count]
        if not _key(&s, m):
            return 0
        if _same(m.key, m.key_len, "jsonrpc", 7):
            if jsonrpc or not _literal(&s, '"2.0"', 5):
                return 0
            jsonrpc = True
        elif _same(m.key, m.key_len, "id", 2):
            if rid != NULL or not _scalar(&s, m) or (m.kind != V_STR and m.kind != V_INT):
                return 0
            rid = m
        elif _same(m.key, m.key_len, "method", 6):
            if method != NULL or not _scalar(&s, m) or m.kind != V_STR:
                return 0
            method = m
        elif _same(m.key, m.key_len, "params", 6):
            if params_count >= 0 or s.p >= s.end or s.p[0] != 123:
                return 0
            if not _object(&s, params, &params_count, arguments, &arguments_count, &meta):
                return 0
        else:
            return 0
        top_count += 1
        step = _next(&s, 125)
        if step == 0:
            return 0
        if step == 2:
            break
    _skip_ws(&s)
    if s.p != s.end or not jsonrpc or rid == NULL or method == NULL:
        return 0
    # The id as the answer writes it: a short integer literal, or a plain string with its quotes.
    cdef const char* id_text = <const char*>rid.val
    cdef Py_ssize_t id_len = rid.val_len
    if rid.kind == V_STR:
        id_text -= 1
        id_len += 2
    if (engine._modern_only or engine._http) and not meta.present:  # no legacy answer here: the line rules judge it
        return 0
    if meta.present:
        return _fast_modern(engine, id_text, id_len, method, &meta, params, params_count, arguments, arguments_count)
    cdef int found = -1
    for i in range(engine._route_count):
        if _same(method.val, method.val_len, engine._method_text[i], engine._method_len[i]):
            found = i
            break
    if found < 0:
        # More routes than the table holds, or a method 2026-07-28 may have: the line rules decide.
        if engine._route_count < len(engine._route_table) or engine._modern is not None:
            return 0
        engine._emit_answer(id_text, id_len, _METHOD_NOT_FOUND_TAIL)
        return 1
    cdef int kind = engine._route_kind[found]
    if kind == R_CONST:
        # Whatever else params holds, the answer is the same (a request carrying _meta is
        # left to the line rules).
        for i in range(params_count):
            if _same(params[i].key, params[i].key_len, "_meta", 5):
                return 0
        engine._emit_answer_text(id_text, id_len, engine._answer_text[found], engine._answer_len[found])
        return 1
    if kind == R_TOOLS_CALL and params_count >= 0:
        return _fast_call(engine, id_text, id_len, params, params_count, arguments, arguments_count, False)
    if kind == R_READ and params_count == 1 and params[0].kind == V_STR \
            and _same(params[0].key, params[0].key_len, "uri", 3):
        return _fast_read(engine, id_text, id_len, &params[0], engine._route_table[found])
    return 0


cdef int _fast_read(Engine engine, const char* rid, Py_ssize_t rid_len, Member* uri_member, _Route route) except -1:
    """Answer ``resources/read`` of a uri; the catalogue's handler reads what C does not."""
    cdef _Read read = None
    cdef int i
    uri = None
    values = None
    if engine._read_count:
        for i in range(engine._read_count):
            if _same(uri_member.val, uri_member.val_len, engine._read_uri[i], engine._read_uri_len[i]):
                read = engine._read_table[i]
                break
    if read is None:
        uri = _value(uri_member)
        if not engine._read_count:
            read = engine._direct_reads.get(uri)
    if read is None and engine._template_reads is not None and uri not in engine._resources:
        for candidate in engine._template_reads:
            values = (<_Read>candidate).match(uri)
            if values is not None:
                read = <_Read>candidate
                break
    if read is None:  # read later (async or with a Context), or not found: the handler says
        pause = engine._rules.handle(PyBytes_FromStringAndSize(rid, rid_len), route.name, route.handler, {"uri": uri})
        engine._take_rules_out()
        return 2 if pause else 1
    engine._due()
    try:
        data = read.func() if values is None else read.func(**values)
        if not _emit_contents(engine, rid, rid_len, read, uri_member, data):
            engine._emit_result(rid, rid_len, read.resource.body(_value(uri_member) if uri is None else uri, data))
    except HANDLER_FAULTS as error:
        engine._emit_answer(rid, rid_len, failure_tail(route.name, error))
    return 1


cdef int _emit_contents(Engine engine, const char* rid, Py_ssize_t rid_len, _Read read, Member* uri_member,
                        object data) except -1:
    """The answer of a read, when C writes what it read (a ``str`` or ``bytes``): 1 if written.

    The same bytes as :meth:`~shipcode_mcp.handlers.Resource.body`: text escaped as orjson
    escapes it, bytes in base64.
    """
    cdef const char* text
    cdef Py_ssize_t n = 0
    cdef Py_ssize_t size
    cdef bytes opening
    kind = type(data)
    if kind is str:
        text = _utf8(data, &n)
        if text == NULL:
            return 0
        size = _escaped_size(<const unsigned char*>text, n)
        opening = read.text_open
    elif kind is bytes:
        text = PyBytes_AS_STRING(data)
        n = PyBytes_GET_SIZE(data)
        size = (n + 2) // 3 * 4
        opening = read.blob_open
    else:
        return 0
    cdef Py_ssize_t head = PyBytes_GET_SIZE(_HEAD)
    cdef Py_ssize_t open_len = PyBytes_GET_SIZE(opening)
    cdef Py_ssize_t closing = PyBytes_GET_SIZE(read.close)
    cdef Py_ssize_t read_head = PyBytes_GET_SIZE(read.head)
    # A template's answer has the request's uri, a plain string as the line has it, quotes included.
    cdef Py_ssize_t uri_len = 0 if read.match is None else uri_member.val_len + 2
    cdef Py_ssize_t total = head + rid_len + read_head + uri_len + open_len + size + closing
    cdef char* out = engine._room(total)
    out += _put(out, PyBytes_AS_STRING(_HEAD), head)
    out += _put(out, rid, rid_len)
    out += _put(out, PyBytes_AS_STRING(read.head), read_head)
    out += _put(out, <const char*>uri_member.val - 1, uri_len)
    out += _put(out, PyBytes_AS_STRING(opening), open_len)
    if kind is bytes:
        out = _write_base64(out, <const unsigned char*>text, n)
    elif size == n:
        out += _put(out, text, n)
    else:
        out = _write_escaped(out, <const unsigned char*>text, n)
    memcpy(out, PyBytes_AS_STRING(read.close), closing)
    engine._out_len += total
    return 1


cdef int _fast_modern(Engine engine, const char* rid, Py_ssize_t rid_len, Member* method, Meta* meta,
                      Member* params, int params_count, Member* arguments, int arguments_count) except -1:
    """A line whose params carry ``_meta``: 2026-07-28 constant answers and plain tool calls.

    Legacy lines with ``_meta``, other versions, a missing capabilities object, other
    methods: the line rules decide.
    """
    cdef int i
    cdef int found = -1
    if engine._modern is None or meta.version == NULL or not meta.capabilities \
            or not _same(meta.version, meta.version_len, PyBytes_AS_STRING(_MODERN_VERSION),
                         PyBytes_GET_SIZE(_MODERN_VERSION)):
        return 0
    for i in range(engine._modern_count):
        if _same(method.val, method.val_len, engine._modern_text[i], engine._modern_len[i]):
            found = i
            break
    if found < 0:
        return 0
    if engine._http and not (_same(method.val, method.val_len, engine._h_method, engine._h_method_len)
                             and _same(meta.version, meta.version_len, engine._h_version, engine._h_version_len)):
        return 0  # HTTP says why the headers do not match
    cdef _Route route = engine._modern_table[found]
    if route.kind == R_CONST:
        if params_count > 1:  # more than _meta (a cursor, say)
            return 0
        engine._emit_answer(rid, rid_len, route.answer)
        return 1
    if route.kind == R_TOOLS_CALL:
        return _fast_call(engine, rid, rid_len, params, params_count, arguments, arguments_count, True)
    return 0


cdef int _lax_floats(_FastTool tool, PyObject** values) except -1:
    """A lax tool's integers for ``number`` fields as floats, as pydantic's lax mode passes them (each value
    a reference owned by the caller, replaced)."""
    cdef int j
    cdef object converted
    for j in range(tool.count):
        if tool.floats[j] and values[j] != NULL and type(<object>values[j]) is int:
            converted = float(<object>values[j])
            Py_INCREF(converted)
            Py_DECREF(<object>values[j])
            values[j] = <PyObject*>converted
    return 0


cdef int _refused(Engine engine, _FastTool tool, const char* rid, Py_ssize_t rid_len, bint modern) except -1:
    """Arguments the flat checks refuse: ``Invalid arguments for <tool>``, or (a lax tool, whose own validation
    may accept them) 0: the line goes to the line rules."""
    if tool.fallback:
        return 0
    engine._emit_body(rid, rid_len, tool.invalid, modern)
    return 1


cdef int _fast_call(Engine engine, const char* rid, Py_ssize_t rid_len, Member* params, int params_count,
                    Member* arguments, int arguments_count, bint modern) except -1:
    cdef Member* name = NULL
    cdef Member* args = NULL
    cdef int i, j
    cdef Member* m
    for i in range(params_count):
        m = &params[i]
        if _same(m.key, m.key_len, "name", 4):
            name = m
        elif _same(m.key, m.key_len, "arguments", 9):
            args = m
        elif m.kind != V_META:
            return 0
    if name == NULL or name.kind != V_STR:
        return 0
    if engine._http and (engine._h_name == NULL
                         or not _same(name.val, name.val_len, engine._h_name, engine._h_name_len)):
        return 0
    cdef _FastTool tool = None
    for candidate in engine._tools:
        if _same(name.val, name.val_len, PyBytes_AS_STRING((<_FastTool>candidate).name),
                 PyBytes_GET_SIZE((<_FastTool>candidate).name)):
            tool = <_FastTool>candidate
            break
    if tool is None or (engine._http and tool.mirrored):
        if engine._http:  # an unknown tool is a 400 on HTTP; mirrored arguments are HTTP's to check
            return 0
        if _value(name) in engine._tool_lookup or not engine._unknown_tool_is_error:
            return 0  # a tool with a schema the fast path does not check; a framework's answer to an unknown one
        engine._emit_answer(rid, rid_len, _UNKNOWN_TOOL_TAIL)
        return 1
    cdef int count = 0
    if args != NULL:
        if args.kind != V_OBJ:
            return _refused(engine, tool, rid, rid_len, modern)
        count = arguments_count
    # Validate: every argument is a known field of the right kind; every required field is there.
    cdef int slots[MAX_MEMBERS]
    cdef int found
    for i in range(count):
        m = &arguments[i]
        slots[i] = -1
        for j in range(tool.count):
            if _same(m.key, m.key_len, tool.field_text[j], tool.field_len[j]):
                slots[i] = j
                break
        if slots[i] < 0 or not _fits(tool.admits[slots[i]], m.kind):
            return _refused(engine, tool, rid, rid_len, modern)
    for j in range(tool.count):
        if tool.required[j]:
            found = 0
            for i in range(count):
                if slots[i] == j:
                    found = 1
                    break
            if not found:
                return _refused(engine, tool, rid, rid_len, modern)
    # The values by field; a call by position when they are the function's first parameters.
    cdef PyObject* stack[MAX_MEMBERS + 1]
    cdef PyObject** values = stack + 1  # stack[0]: room for PY_VECTORCALL_ARGUMENTS_OFFSET
    cdef object text_arg = None   # a plain string argument whose JSON text is already in the line
    cdef Member* text_member = NULL
    cdef int leading = 0
    for j in range(tool.count):
        values[j] = NULL
    try:
        for i in range(count):
            value = _value(&arguments[i])
            Py_INCREF(value)
            values[slots[i]] = <PyObject*>value
            if arguments[i].kind == V_STR:
                text_arg = value
                text_member = &arguments[i]
        if tool.fallback:
            _lax_floats(tool, values)
        while leading < tool.count and values[leading] != NULL:
            leading += 1
        engine._due()
        try:
            if leading == count and leading <= tool.positional:
                result = PyObject_Vectorcall(tool.func, values, leading | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL)
            else:
                kwargs = PyDict_New()
                for j in range(tool.count):
                    if values[j] != NULL:
                        PyDict_SetItem(kwargs, tool.field_keys[j], <object>values[j])
                result = tool.func(**kwargs)
        except HANDLER_FAULTS as error:
            engine._emit_body(rid, rid_len, tool.failed(error), modern)
            return 1
        except InputRequired:
            from shipcode_mcp.eras import asked_without_context

            engine._emit_answer(rid, rid_len, asked_without_context("tools/call").tail)
            return 1
    finally:
        for j in range(tool.count):
            if values[j] != NULL:
                Py_DECREF(<object>values[j])
    if tool.encode is not None:
        if text_member != NULL and result is text_arg and tool.str_pieces is not None and not modern:
            return _emit_pieces(engine, rid, rid_len, tool.str_pieces, <const char*>text_member.val,
                                text_member.val_len)
        return _emit_laid_out(engine, rid, rid_len, tool, result, modern)
    if text_member != NULL and result is text_arg:
        # Returned unchanged: its JSON text is the input's.
        engine._emit_text(rid, rid_len, <const char*>text_member.val, text_member.val_len, modern)
    elif not engine._emit_value(rid, rid_len, result, modern):
        try:
            body = tool_result(result, False)
        except HANDLER_FAULTS as error:
            body = tool.failed(error)
        engine._emit_body(rid, rid_len, body, modern)
    return 1


cdef int _emit_laid_out(Engine engine, const char* rid, Py_ssize_t rid_len, _FastTool tool, object result,
                        bint modern) except -1:
    """The answer of a framework's tool: its layout around the value's text where C writes that text, else
    the tool's own ``encode`` (``failed`` if that raises). Twin: the framework's ``FrameworkTool.encode``."""
    cdef char number[40]
    cdef const char* text
    cdef Py_ssize_t n = 0
    cdef int overflow = 0
    cdef long long integer
    kind = type(result)
    if modern:
        pass
    elif kind is str and tool.str_pieces is not None:
        text = _utf8(result, &n)
        if text != NULL and _escape_free(<const unsigned char*>text, n):
            return _emit_pieces(engine, rid, rid_len, tool.str_pieces, text, n)
    elif kind is int and tool.int_pieces is not None:
        integer = PyLong_AsLongLongAndOverflow(result, &overflow)
        if not overflow:
            if integer < 0:
                number[0] = 45
                n = 1 + _decimal(-<unsigned long long>integer, number + 1)
            else:
                n = _decimal(integer, number)
            return _emit_pieces(engine, rid, rid_len, tool.int_pieces, number, n)
    elif kind is float and tool.float_pieces is not None:
        n = _repr_text(result, number)
        if n:
            return _emit_pieces(engine, rid, rid_len, tool.float_pieces, number, n)
    elif result is True and tool.true_answer is not None:
        engine._emit_answer(rid, rid_len, tool.true_answer)
        return 1
    elif result is False and tool.false_answer is not None:
        engine._emit_answer(rid, rid_len, tool.false_answer)
        return 1
    elif result is None and tool.none_answer is not None:
        engine._emit_answer(rid, rid_len, tool.none_answer)
        return 1
    try:
        body = tool.encode(result)
    except HANDLER_FAULTS as error:
        body = tool.failed(error)
    engine._emit_body(rid, rid_len, body, modern)
    return 1


cdef int _emit_pieces(Engine engine, const char* rid, Py_ssize_t rid_len, tuple pieces, const char* text,
                      Py_ssize_t n) except -1:
    """The answer ``pieces`` joined by ``text`` after the id (see :class:`shipcode_mcp.layouts.ResultLayout`): 1."""
    cdef Py_ssize_t count = len(pieces)
    cdef Py_ssize_t head = PyBytes_GET_SIZE(_HEAD)
    cdef Py_ssize_t total = head + rid_len + n * (count - 1)
    cdef Py_ssize_t i, size
    for i in range(count):
        total += PyBytes_GET_SIZE(<bytes>pieces[i])
    cdef char* out = engine._room(total)
    memcpy(out, PyBytes_AS_STRING(_HEAD), head)
    out += head
    memcpy(out, rid, rid_len)
    out += rid_len
    for i in range(count):
        if i:
            memcpy(out, text, n)
            out += n
        size = PyBytes_GET_SIZE(<bytes>pieces[i])
        memcpy(out, PyBytes_AS_STRING(<bytes>pieces[i]), size)
        out += size
    engine._out_len += total
    return 1
