# The parts of CPython's C API that Cython's ``cpython`` package does not declare.

cdef extern from "Python.h":
    ctypedef struct PyObject
    double PyOS_string_to_double(const char* s, char** endptr, PyObject* overflow_exception) except? -1.0
    char* PyOS_double_to_string(double value, char format_code, int precision, int flags, int* kind) except NULL
    object PyObject_Vectorcall(object callable, PyObject** args, size_t nargsf, PyObject* kwnames)
    size_t PY_VECTORCALL_ARGUMENTS_OFFSET
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void* PyUnicode_DATA(object text)
