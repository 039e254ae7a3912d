# The system calls and constants of fd I/O (fdio.pxi) that Cython's ``libc`` and ``posix`` do not declare.

cdef extern from "errno.h":
    int EWOULDBLOCK

cdef extern from "poll.h" nogil:
    struct pollfd:
        int fd
        short events
        short revents
    int poll(pollfd* fds, unsigned long nfds, int timeout)
    enum:
        POLLIN
        POLLOUT
