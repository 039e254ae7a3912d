# fd I/O while serving: the clock, waiting on a descriptor, one write(2) (included by _engine_c.pyx;
# declarations in system.pxd). The twins of _wait and the writes of shipcode_mcp._engine_py.


cdef inline double _now() noexcept nogil:
    cdef timespec t
    clock_gettime(CLOCK_MONOTONIC, &t)
    return t.tv_sec + t.tv_nsec * 1e-9


cdef inline int _wait(int fd, short events, int timeout_ms) except -1:
    """Wait until fd is ready (or the timeout passes); 1 if ready. Twin: ``shipcode_mcp._engine_py._wait``."""
    cdef pollfd p
    cdef int ready
    p.fd = fd
    p.events = events
    p.revents = 0
    with nogil:
        ready = poll(&p, 1, timeout_ms)
    return ready > 0


cdef int _write_some(int fd, const char* p, Py_ssize_t n, Py_ssize_t* done) except -1:
    """One write(2) of up to n bytes; waits while a non-blocking fd is full.

    Twin: the ``os.write`` of ``shipcode_mcp._engine_py.Engine._flush``.
    """
    cdef Py_ssize_t wrote
    while True:
        with nogil:
            wrote = write(fd, p, n)
        if wrote >= 0:
            done[0] = wrote
            return 0
        if errno == EINTR:
            PyErr_CheckSignals()
        elif errno == EAGAIN or errno == EWOULDBLOCK:
            _wait(fd, POLLOUT, -1)
        else:
            PyErr_SetFromErrno(OSError)
            return -1
