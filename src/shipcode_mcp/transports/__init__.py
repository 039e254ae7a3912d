"""The transports: how messages reach the message core and answers leave it.

- :mod:`.stdio`: one client on stdin/stdout (with :mod:`.scheduler` for deferred work and
  :mod:`.signals` for quiet stops);
- :mod:`.http`: Streamable HTTP as a plain ASGI application, imported only when asked for;
- :mod:`.workers`: the worker threads, a finished job's answer and requests to the client, shared by both.

Both sit on the same message core (the line rules, the catalogue, the eras) and the same two
engines; neither imports the other, and the framework imports them only when it is asked to serve.
"""
